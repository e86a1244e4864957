import type { LocalStack, StackSiteHandle } from "../../lib/stack/local-stack.ts";
import { waitFor } from "../../lib/stack/weighted-plan.ts";

/** What the fault matrix reads of a plan. */
export interface PlanView {
  version: number;
  policy: string;
  sites: { site: string; instances: { id: string; model: string }[] }[];
  routing: Record<string, { site: string; weight: number }[]>;
  standby?: { model: string; site: string; instance: string; idlePowerW: number; gco2ePerHour: number | null }[];
}

/**
 * The fleet planner's plan for the matrix's traffic: a load forecast of `rps` spread over the
 * classes its requests may fall in (the input bin the edge classifies one in, with any output bin:
 * the edge's output-length predictor learns as answers come back), a replan through the policy
 * registry (the fleet's standby setting applies), and every site on the new plan.
 */
export async function planForTraffic(stack: LocalStack, request: { inputTokens: number; outputTokens: number }, rps: number): Promise<{ plan: PlanView }> {
  const probe = await stack.load!.send(request.inputTokens, request.outputTokens, true);
  const inputBin = stack.fleet!.classes.find((c) => c.id === probe.classId)?.inputBin;
  if (inputBin === undefined) throw new Error(`the edge did not classify the matrix's request: ${probe.status} ${probe.error ?? ""}`);
  const classes = stack.fleet!.classes.filter((c) => c.inputBin === inputBin).map((c) => c.id as string);
  const now = Date.now();
  await stack.admin("POST", "/admin/v1/forecasts", classes.map((id) => ({ kind: "load", unit: "req/s", source: "bench:faults", issuedAtMs: now, subject: { kind: "class", id }, points: [{ tMs: now, value: rps / classes.length }] })));
  await stack.replan();
  const plan = await stack.admin<PlanView>("GET", "/admin/v1/plan");
  await waitFor(async () => (await stack.admin<{ health: { healthy: boolean; appliedPlanVersion: number | null } }[]>("GET", "/admin/v1/sites")).every((s) => s.health.healthy && s.health.appliedPlanVersion === plan.version), 60_000, `plan ${plan.version} applied at every site`);
  return { plan };
}

/** The site whose gateway has the most requests in flight now (its agent's /metrics), and how many. */
export async function busiestNow(stack: LocalStack): Promise<{ site: StackSiteHandle; inFlight: number }> {
  const counts = await Promise.all(
    stack.sites.map(async (site) => {
      const text = await (await fetch(`${site.localApiUrl}/metrics`, { headers: { authorization: `Bearer ${site.readToken}` } })).text();
      const inFlight = text.split("\n").filter((l) => l.startsWith("greenference_gateway_requests_in_flight{")).reduce((n, l) => n + Number(l.slice(l.lastIndexOf(" ") + 1)), 0);
      return { site, inFlight };
    }),
  );
  return counts.sort((a, b) => b.inFlight - a.inFlight)[0]!;
}

/** Where else the plan runs the model: its standby, or the other sites with an instance of it. */
export function failoverOf(plan: PlanView, site: string, model: string): string {
  const standby = plan.standby?.filter((s) => s.model === model).map((s) => `standby ${s.instance} at ${s.site} (${s.idlePowerW.toFixed(0)} W idle${s.gco2ePerHour === null ? "" : `, ${s.gco2ePerHour.toFixed(1)} gCO2e/h`})`);
  if (standby?.length) return standby.join(", ");
  const others = plan.sites.filter((s) => s.site !== site && s.instances.some((i) => i.model === model)).map((s) => s.site);
  return others.length > 0 ? `no standby needed: the plan runs the model at ${others.join(", ")} too` : "nowhere else";
}

/**
 * Sends requests until one is served at `site` (so the edge holds it as failing no more) and
 * `also` holds; throws after `timeoutMs`.
 */
export async function servedAt(stack: LocalStack, site: string, also: () => boolean = () => true, timeoutMs = 60_000): Promise<void> {
  await waitFor(async () => {
    const o = await stack.load!.send(40, 8, false);
    return o.ok && o.site === site && also();
  }, timeoutMs, `a request served at ${site}`);
}
