import type { IRequest, RouterType } from "itty-router";
import { controlStub } from "../../durable-objects/control-do.ts";
import { carbonKindOf } from "../../functions/forecast-refresh.ts";
import { buildDashboardState, type SiteObservation } from "../core/dashboard/build-dashboard-state.ts";
import { DRAW_HISTORY_LIMITS } from "../core/dashboard/bounded-history.ts";
import { DashboardAccess } from "../core/dashboard/dashboard-state.ts";
import { seriesKey } from "../core/forecast/forecast-store.ts";
import { requireReader } from "./auth.ts";
import { dashboardHtml } from "./dashboard-page.ts";
import { echartsAsset } from "./dashboard-vendor.ts";
import { heartbeatTimeoutMs, type EdgeEnv } from "../edge/env.ts";
import type { EdgeContext } from "./inference.ts";
import { openAiError } from "./openai-error.ts";

/** How far back the state's per-site history reaches: as far as SiteDO keeps draw samples. */
export const DASHBOARD_HISTORY_MS = DRAW_HISTORY_LIMITS.maxPoints * DRAW_HISTORY_LIMITS.minSpacingMs;

const IMMUTABLE = "public, max-age=31536000, immutable";

/**
 * The operator dashboard: `GET /dashboard` (the page; it holds no data; `GET /` redirects there), its charting library
 * under `/dashboard/assets/`, and `GET /dashboard/v1/state` (DashboardState as JSON), which needs
 * the read-only dashboard token (or the admin token) unless the `DASHBOARD_ACCESS` var is "public".
 */
export function addDashboardRoutes(router: RouterType, edge: EdgeContext): void {
  // The root leads to the dashboard, keeping the query (`?token=` opens it with admin access).
  router.get("/", (request: IRequest) => new Response(null, { status: 302, headers: { location: `/dashboard${new URL(request.url).search}`, "cache-control": "no-cache" } }));

  router.get("/dashboard", async () => {
    const { name } = await echartsAsset();
    return new Response(dashboardHtml({ echartsSrc: `/dashboard/assets/${name}` }), {
      headers: {
        "content-type": "text/html; charset=utf-8",
        "cache-control": "no-cache",
        "content-security-policy": "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
        "x-content-type-options": "nosniff",
      },
    });
  });

  router.get("/dashboard/assets/:file", async (request: IRequest) => {
    const asset = await echartsAsset();
    const file = request.params.file!;
    // A page from an older deployment asks for the library by its old hash: it gets the current one, not cached.
    if (file !== asset.name && !/^echarts-[0-9a-f]{16}\.min\.js$/.test(file)) return openAiError(404, `no dashboard asset "${file.slice(0, 200)}"`, { code: "not_found" });
    return new Response(asset.body, { headers: { "content-type": asset.contentType, "cache-control": file === asset.name ? IMMUTABLE : "no-cache", "x-content-type-options": "nosniff" } });
  });

  router.get("/dashboard/v1/state", async (request: IRequest, env: EdgeEnv) => {
    const access = await dashboardAccess(request, env);
    if (access instanceof Response) return access;
    const control = controlStub(env);
    await edge.metrics.flush(control);
    const nowMs = edge.now();
    const historyFromMs = nowMs - DASHBOARD_HISTORY_MS;
    const ctx = await control.dashboardContext(historyFromMs, nowMs);
    const sites: Record<string, SiteObservation> = {};
    await Promise.all(
      (ctx.fleet?.sites ?? []).map(async (site) => {
        const view = await env.SITE.get(env.SITE.idFromName(site.id)).dashboardView();
        const subject = { kind: "site" as const, id: site.id };
        sites[site.id] = {
          health: view.health,
          telemetry: view.telemetry,
          drawHistory: view.drawHistory,
          sloHistory: view.sloHistory,
          powerForecasts: ctx.forecasts[seriesKey({ kind: "power_available", subject })] ?? [],
          carbonForecasts: ctx.forecasts[seriesKey({ kind: carbonKindOf(site.carbon), subject })] ?? [],
        };
      }),
    );
    const state = buildDashboardState({
      nowMs,
      historyFromMs,
      access,
      heartbeatTimeoutMs: heartbeatTimeoutMs(env),
      fleet: ctx.fleet,
      plan: ctx.plan,
      planStoredAtMs: ctx.planStoredAtMs,
      reportedCarbon: new Map(Object.entries(ctx.carbon)),
      metricTotals: ctx.metricTotals,
      sites,
      corrections: ctx.corrections,
    });
    return Response.json(state, { headers: { "cache-control": "no-store" } });
  });
}

/**
 * Who may read the state: anyone when `DASHBOARD_ACCESS` is "public" (local development), else
 * (the default, "admin") only callers with the read-only `DASHBOARD_TOKEN` or the admin token as
 * a bearer token; a 401 otherwise.
 * Any other value is a configuration error (500) rather than a silent choice.
 */
export async function dashboardAccess(request: Request, env: EdgeEnv): Promise<DashboardAccess | Response> {
  const configured: string = env.DASHBOARD_ACCESS ?? "admin";
  const access = DashboardAccess.safeParse(configured);
  if (!access.success) return openAiError(500, `DASHBOARD_ACCESS must be "admin" or "public", not "${configured}"`, { code: "invalid_configuration" });
  if (access.data === "public") return "public";
  return (await requireReader(request, env)) ?? "admin";
}
