import { gpuSpec } from "../../src/core/model/gpu-specs.ts";
import { SERVER_POWER_OVERHEAD } from "../../src/core/model/power.ts";
import type { LocalStack } from "./local-stack.ts";

/** The load a weighted plan says each class brings (the tests send their own; this sizes the headroom). */
const PLANNED_RPS_PER_CLASS = 0.05;

/**
 * A plan set through the admin API (tests): two replicas of the stack's smallest TP
 * per site at max clock (each site's power cap 50 kW unless `powerCapW` names it), every class
 * routed to all sites with the given weights, planned at 0.05 req/s per class (about half of the
 * entry's time: the rest is headroom the deferral scheduler releases batch and flex work into); the
 * instances at the `standby` sites are the plan's standbys (routing fails over to them). Returns
 * once every weighted and standby site's agent has applied it.
 */
export async function setWeightedPlan(stack: LocalStack, weights: Record<string, number>, o: { powerCapW?: Record<string, number>; standby?: readonly string[] } = {}): Promise<number> {
  const current = await stack.admin<{ version: number }>("GET", "/admin/v1/plan").catch(() => ({ version: 0 }));
  const version = current.version + 1;
  const classes = stack.fleet!.classes.map((c) => c.id as string);
  const now = Date.now();
  const tp = Math.min(...stack.config.tps);
  const plan = {
    version,
    createdAtMs: now,
    validUntilMs: now + 3_600_000,
    policy: stack.fleet!.policy.kind,
    sites: stack.sites.map((s) => ({
      site: s.site.id,
      powerCapW: o.powerCapW?.[s.site.id] ?? 50_000,
      instances: [{ id: "i0", model: stack.config.model, variant: "base", tp, replicas: 2, gpus: Array.from({ length: 2 * tp }, (_, i) => i), clock: { mode: "locked", mhz: 1980 }, loadRps: Object.fromEntries(classes.map((c) => [c, PLANNED_RPS_PER_CLASS])) }],
    })),
    routing: Object.fromEntries(classes.map((c) => [c, stack.sites.map((s) => ({ site: s.site.id, instance: "i0", weight: weights[s.site.id] ?? 0 })).filter((t) => t.weight > 0)])),
    ...(o.standby ? { standby: o.standby.map((site) => ({ model: stack.config.model, site, instance: "i0", idlePowerW: 2 * tp * gpuSpec(stack.config.gpuType).power.idleW * SERVER_POWER_OVERHEAD, gco2ePerHour: null })) } : {}),
  };
  await stack.admin("PUT", "/admin/v1/plan", plan);
  await waitFor(async () => {
    const sites = await stack.admin<{ site: string; health: { healthy: boolean; appliedPlanVersion: number | null } }[]>("GET", "/admin/v1/sites");
    const waitsFor = (site: string) => (weights[site] ?? 0) > 0 || (o.standby ?? []).includes(site);
    return sites.every((s) => !waitsFor(s.site) || (s.health.healthy && s.health.appliedPlanVersion === version));
  }, 60_000, `plan ${version} applied at every weighted site`);
  return version;
}

/** Polls `check` every 200 ms until it holds; throws naming `what` after `timeoutMs`. */
export async function waitFor(check: () => Promise<boolean> | boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for: ${what}`);
}
