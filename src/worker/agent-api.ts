import type { IRequest, RouterType } from "itty-router";
import { controlStub } from "../../durable-objects/control-do.ts";
import { Forecast } from "../core/schemas/forecast.ts";
import { planEtag } from "../core/schemas/plan-slice.ts";
import { requireSite } from "./auth.ts";
import { bodyIdleTimeoutMs, heartbeatTimeoutMs } from "../edge/env.ts";
import type { EdgeContext } from "./inference.ts";
import { outcomeError, parseBody, readJson } from "./json-body.ts";
import { internalError, openAiError } from "./openai-error.ts";

/** Agent messages are small; a heartbeat of a large site is a few tens of KiB. */
export const AGENT_BODY_LIMIT = 256 * 1024;

type Handler = (request: IRequest, env: Env, site: string) => Promise<Response>;

/**
 * The agent API under `/agent/v1/sites/:site/`: register, heartbeat, plan (with ETag), applied, and
 * power-forecast (the site's own `power_available` forecast, which the planner plans on until it
 * goes stale).
 * Every call needs the site's own token (401 without a valid one, 403 with another site's), and
 * the site must be in the fleet (404).
 */
export function addAgentRoutes(router: RouterType, edge: EdgeContext): void {
  const guarded =
    (handler: Handler) =>
    async (request: IRequest, env: Env): Promise<Response> => {
      const site = request.params.site!;
      const denied = await requireSite(request, env, site);
      if (denied) return denied;
      const { snapshot } = await edge.cache.get(env);
      if (!snapshot.routing?.sites[site as never]) return openAiError(404, `site "${site}" is not in the fleet`, { code: "unknown_site" });
      return handler(request, env, site).catch((error: unknown) => internalError(error, { explain: true }));
    };
  const siteDo = (env: Env, site: string) => env.SITE.get(env.SITE.idFromName(site));

  router.post(
    "/agent/v1/sites/:site/register",
    guarded(async (request, env, site) => {
      const body = await readJson(request, AGENT_BODY_LIMIT, bodyIdleTimeoutMs(env));
      if (!body.ok) return body.response;
      const outcome = await siteDo(env, site).register(body.value);
      if (!outcome.ok) return outcomeError(outcome);
      const planVersion = await controlStub(env).currentPlanVersion();
      return Response.json({ site, registration: outcome.value, heartbeatIntervalMs: Math.floor(heartbeatTimeoutMs(env) / 3), planVersion });
    }),
  );

  router.post(
    "/agent/v1/sites/:site/heartbeat",
    guarded(async (request, env, site) => {
      const body = await readJson(request, AGENT_BODY_LIMIT, bodyIdleTimeoutMs(env));
      if (!body.ok) return body.response;
      const claimed = (body.value as { site?: unknown } | null)?.site;
      if (typeof claimed === "string" && claimed !== site) {
        return openAiError(403, `site "${site}" cannot report telemetry for site "${claimed}"`, { type: "permission_error", param: "site", code: "wrong_site" });
      }
      const outcome = await siteDo(env, site).acceptHeartbeat(body.value);
      return outcome.ok ? Response.json(outcome.value) : outcomeError(outcome);
    }),
  );

  router.get(
    "/agent/v1/sites/:site/plan",
    guarded(async (request, env, site) => {
      const known = request.headers.get("if-none-match");
      const { snapshot } = await edge.cache.get(env);
      const cached = snapshot.routing?.planVersion;
      if (known !== null && cached != null && known === planEtag(cached, snapshot.routing!.planRevision)) return new Response(null, { status: 304, headers: { etag: known } });
      const slice = await controlStub(env).planSlice(site);
      if (!slice) return openAiError(404, "no plan has been issued yet", { code: "no_plan" });
      const etag = planEtag(slice.version, slice.revision);
      if (known === etag) return new Response(null, { status: 304, headers: { etag } });
      return Response.json(slice, { headers: { etag, "cache-control": "no-cache" } });
    }),
  );

  router.post(
    "/agent/v1/sites/:site/applied",
    guarded(async (request, env, site) => {
      const body = await readJson(request, AGENT_BODY_LIMIT, bodyIdleTimeoutMs(env));
      if (!body.ok) return body.response;
      const current = await controlStub(env).currentPlanVersion();
      const outcome = await siteDo(env, site).reportApplied(body.value, current);
      return outcome.ok ? Response.json(outcome.value) : outcomeError(outcome);
    }),
  );

  router.post(
    "/agent/v1/sites/:site/power-forecast",
    guarded(async (request, env, site) => {
      const body = await readJson(request, AGENT_BODY_LIMIT, bodyIdleTimeoutMs(env));
      if (!body.ok) return body.response;
      const parsed = parseBody(Forecast, body.value);
      if (!parsed.ok) return parsed.response;
      const { kind, subject } = parsed.value;
      if (kind !== "power_available") return openAiError(400, `a site pushes its power_available forecast, not ${kind}`, { param: "kind", code: "invalid_value" });
      if (subject.kind !== "site" || subject.id !== site) {
        return openAiError(403, `site "${site}" cannot push a forecast about ${subject.kind} "${subject.id}"`, { type: "permission_error", param: "subject", code: "wrong_site" });
      }
      const stored = await controlStub(env).putForecasts(parsed.value, edge.now());
      return stored.ok ? Response.json({ site, ...stored.value }) : outcomeError(stored);
    }),
  );
}
