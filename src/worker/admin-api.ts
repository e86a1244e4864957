import type { IRequest, RouterType } from "itty-router";
import { controlStub } from "../../durable-objects/control-do.ts";
import { defaultCronDeps } from "../../functions/cron-deps.ts";
import { cronOutcome, runPlannerLong } from "../../functions/planner-long.ts";
import type { Outcome } from "../../durable-objects/outcome.ts";
import { requireAdmin, requireReader } from "./auth.ts";
import { bodyIdleTimeoutMs, type EdgeEnv } from "../edge/env.ts";
import type { EdgeContext } from "./inference.ts";
import { outcomeError, readJson } from "./json-body.ts";
import { controlGaugesText } from "./control-gauges.ts";
import { renderPrometheus } from "./metrics.ts";
import { internalError, openAiError } from "./openai-error.ts";
import { replaceFleet } from "./fleet-change.ts";
import { switchPolicy } from "./policy-switch.ts";
import { DEFAULT_INGRESS_OVERLAP_S, MAX_INGRESS_OVERLAP_S } from "../../durable-objects/ingress-secret-store.ts";
import { PLAN_VERSION_MAX } from "../core/schemas/plan.ts";
import { makeApiKey, makeIngressSecret, makeSiteToken, sha256Hex } from "../edge/secrets.ts";

/** Fleets and plans of large deployments (64 sites x 9 classes) stay well under this. */
export const ADMIN_BODY_LIMIT = 4 * 1024 * 1024;

type Handler = (request: IRequest, env: EdgeEnv) => Promise<Response>;

/**
 * The admin API under `/admin/v1/` and `GET /metrics`, behind the admin token: fleet, policy,
 * plans (upload, current, by version, history), forecast upload, replan, sites (status, token
 * and ingress-secret issue), API keys, history; `GET /metrics` also takes the read-only token.
 * Changes invalidate this isolate's snapshot cache; other isolates see them within its TTL.
 */
export function addAdminRoutes(router: RouterType, edge: EdgeContext): void {
  const admin =
    (handler: Handler) =>
    async (request: IRequest, env: EdgeEnv): Promise<Response> =>
      (await requireAdmin(request, env)) ?? handler(request, env).catch((error: unknown) => internalError(error, { explain: true }));
  const mutate = async <T>(request: IRequest, env: EdgeEnv, apply: (body: unknown) => Promise<Outcome<T>>, status = 200): Promise<Response> => {
    const body = await readJson(request, ADMIN_BODY_LIMIT, bodyIdleTimeoutMs(env));
    if (!body.ok) return body.response;
    const outcome = await apply(body.value);
    if (!outcome.ok) return outcomeError(outcome);
    edge.cache.invalidate();
    return Response.json(outcome.value, { status });
  };
  const orNotFound = (value: unknown, what: string) => (value === null ? openAiError(404, `no ${what} yet`, { code: "not_found" }) : Response.json(value));

  router.get("/admin/v1/fleet", admin(async (_, env) => orNotFound(await controlStub(env).getFleet(), "fleet")));
  // A changed fleet (sites, policy, anything) is planned at once; the answer carries the planner's run. One that cannot plan is undone (422).
  router.put("/admin/v1/fleet", admin((request, env) => mutate(request, env, (b) => replaceFleet(env, b))));
  router.get("/admin/v1/policy", admin(async (_, env) => orNotFound((await controlStub(env).getFleet())?.policy ?? null, "fleet")));
  // A changed policy (kind or weights) is planned at once; the answer carries the planner's run. One its planner cannot plan is undone (422).
  router.put("/admin/v1/policy", admin((request, env) => mutate(request, env, (b) => switchPolicy(env, b))));

  router.get("/admin/v1/plan", admin(async (_, env) => orNotFound(await controlStub(env).getPlan(), "plan")));
  router.put("/admin/v1/plan", admin((request, env) => mutate(request, env, (b) => controlStub(env).putPlan(b, { fromOperator: true }))));
  // The profile table the planners plan on (`greenference profile` writes one); GET answers its summary.
  router.get("/admin/v1/profile", admin(async (_, env) => orNotFound(await controlStub(env).profileSummary(), "profile table")));
  // A table that covers none of the fleet's models on its GPU types is refused (422): no planner could plan on it.
  router.put("/admin/v1/profile", admin((request, env) => mutate(request, env, (b) => controlStub(env).putProfile(b, { coverFleet: true }))));
  router.get("/admin/v1/plan/history", admin(async (_, env) => Response.json(await controlStub(env).planHistory())));
  router.get(
    "/admin/v1/plans/:version",
    admin(async (request, env) => {
      const version = planVersionOf(request.params.version!);
      if (version === null) return openAiError(400, `plan version must be written in decimal digits, from 0 to ${PLAN_VERSION_MAX}`, { param: "version", code: "invalid_value" });
      const plan = await controlStub(env).planVersion(version);
      return plan.ok ? Response.json(plan.value) : outcomeError(plan);
    }),
  );
  // A Forecast or a list of them (power per site, load per class, carbon or a replay series per site), each about the fleet's sites and classes.
  router.post("/admin/v1/forecasts", admin((request, env) => mutate(request, env, (b) => controlStub(env).putForecasts(b, Date.now(), { fleetSubjects: true }), 201)));
  // Runs the long-horizon planner now: 200 with the new plan's summary, 409 when it could not plan
  // (no fleet, planner, profile or demand), 500 when it failed; the run is logged as "replan".
  router.post(
    "/admin/v1/replan",
    admin(async (_, env) => {
      const nowMs = Date.now();
      const run = await runPlannerLong(env, nowMs, defaultCronDeps(), { force: true });
      await controlStub(env).recordCronRun("replan", nowMs, cronOutcome(run));
      if (run.status === "skipped") return openAiError(409, run.message ?? "nothing to plan", { code: "replan_skipped" });
      if (run.status === "error") return openAiError(500, run.message ?? "the planner failed", { code: "replan_failed" });
      edge.cache.invalidate();
      return Response.json(run);
    }),
  );

  router.get(
    "/admin/v1/history",
    admin(async (_, env) => {
      const control = controlStub(env);
      return Response.json({ plans: await control.planHistory(), cronRuns: await control.cronRuns(), corrections: await control.correctionLog() });
    }),
  );

  router.get(
    "/admin/v1/sites",
    admin(async (_, env) => {
      const control = controlStub(env);
      const ids = ((await control.getFleet())?.sites ?? []).map((s) => s.id);
      const ingress = await control.ingressSecretStatus(ids);
      const sites = await Promise.all(ids.map(async (site) => ({ site, ...(await env.SITE.get(env.SITE.idFromName(site)).info()), ingressSecret: ingress[site] })));
      return Response.json(sites);
    }),
  );
  /**
   * Rotates `:site`'s ingress secret after `issue` has issued what else the route gives the site,
   * and answers 201 with it all. The edge signs with the new secret at once and, for `?overlap_s=`
   * seconds (default 3600, 0 to cut the old one off now), with the old one too, so the agent may be
   * given the new secret at any time within the overlap. An unknown site (404) or a bad overlap
   * (400) issues nothing.
   */
  const rotateIngress = (issue: (site: string, env: EdgeEnv) => Promise<Record<string, string>>) =>
    admin(async (request, env) => {
      const site = await fleetSite(request, env);
      if (site instanceof Response) return site;
      const overlapMs = overlapOf(request);
      if (overlapMs instanceof Response) return overlapMs;
      const issued = await issue(site, env);
      const ingressSecret = makeIngressSecret();
      const ingress = await controlStub(env).rotateIngressSecret(site, ingressSecret, overlapMs);
      edge.cache.invalidate();
      return Response.json({ site, ...issued, ingressSecret, previousIngressSecretValidUntilMs: ingress.previousUntilMs }, { status: 201 });
    });
  // A new agent token and a new ingress secret for the site (the agent needs both; the token's
  // hash and the secret are stored, the token is shown only here).
  router.post(
    "/admin/v1/sites/:site/token",
    rotateIngress(async (site, env) => {
      const token = makeSiteToken(site);
      await env.SITE.get(env.SITE.idFromName(site)).setTokenHash(await sha256Hex(token));
      return { token };
    }),
  );
  // The site's ingress secret alone.
  router.post("/admin/v1/sites/:site/ingress-secret", rotateIngress(async () => ({})));

  router.get("/admin/v1/keys", admin(async (_, env) => Response.json(await controlStub(env).listApiKeys())));
  router.post(
    "/admin/v1/keys",
    admin(async (request, env) => {
      const { id, key } = makeApiKey();
      const hash = await sha256Hex(key);
      const response = await mutate(request, env, (b) => controlStub(env).createApiKey(id, hash, b), 201);
      if (!response.ok) return response;
      const { hash: _hash, ...record } = (await response.json()) as Record<string, unknown>;
      return Response.json({ ...record, key }, { status: 201 });
    }),
  );
  // Body: {"gco2e": 500, "period": "day" | "month"}, or null to remove the budget.
  router.put(
    "/admin/v1/keys/:id/carbon-budget",
    admin(async (request, env) => {
      const response = await mutate(request, env, (b) => controlStub(env).setApiKeyCarbonBudget(request.params.id!, b));
      if (!response.ok) return response;
      edge.cache.invalidate();
      const { hash: _hash, ...record } = (await response.json()) as Record<string, unknown>;
      return Response.json(record);
    }),
  );
  router.delete(
    "/admin/v1/keys/:id",
    admin(async (request, env) => {
      const outcome = await controlStub(env).revokeApiKey(request.params.id!);
      if (!outcome.ok) return outcomeError(outcome);
      edge.cache.invalidate();
      return Response.json(outcome.value);
    }),
  );

  // Read-only: the dashboard token (a Prometheus scraper's) or the admin token.
  router.get("/metrics", async (request: IRequest, env: EdgeEnv) => {
    const denied = await requireReader(request, env);
    if (denied) return denied;
    const control = controlStub(env);
    await edge.metrics.flush(control);
    const [totals, gauges] = await Promise.all([control.metricTotals(), control.controlGauges()]);
    return new Response(renderPrometheus(totals) + controlGaugesText(gauges), { headers: { "content-type": "text/plain; version=0.0.4; charset=utf-8" } });
  });
}

/** The `:site` of the request when it is in the fleet, else a 404. */
async function fleetSite(request: IRequest, env: EdgeEnv): Promise<string | Response> {
  const site = request.params.site!;
  const fleet = await controlStub(env).getFleet();
  if (!fleet?.sites.some((s) => s.id === site)) return openAiError(404, `site "${site.slice(0, 64)}" is not in the fleet`, { code: "unknown_site" });
  return site;
}

/** A `:version` of decimal digits only (not `0x10`, `1e3` or `2.0`, which Number() reads) up to PLAN_VERSION_MAX, else null. */
function planVersionOf(raw: string): number | null {
  if (!/^\d{1,10}$/.test(raw)) return null;
  const version = Number(raw);
  return version <= PLAN_VERSION_MAX ? version : null;
}

/** `?overlap_s=` in ms (default DEFAULT_INGRESS_OVERLAP_S), or a 400 outside 0..MAX_INGRESS_OVERLAP_S. */
function overlapOf(request: IRequest): number | Response {
  const raw = new URL(request.url).searchParams.get("overlap_s");
  const s = raw === null ? DEFAULT_INGRESS_OVERLAP_S : /^\d{1,7}$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isInteger(s) || s < 0 || s > MAX_INGRESS_OVERLAP_S) return openAiError(400, `overlap_s must be a whole number of seconds from 0 to ${MAX_INGRESS_OVERLAP_S}`, { param: "overlap_s", code: "invalid_value" });
  return s * 1000;
}
