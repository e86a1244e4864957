import type { Plan } from "../schemas/plan.ts";
import type { SitePlanSlice } from "../schemas/plan-slice.ts";

/**
 * One site's part of a plan, as its agent pulls it: what the site runs (null when nothing) and, per
 * class, the routing targets at the site; `models` is empty (ControlDO names the fleet's model
 * identities, which the plan does not hold).
 *
 * @example
 * siteSlice(plan, "wind-a"); // { version: 7, revision: 0, site: { instances: [...] }, routing: { SS: [...] } }
 */
export function siteSlice(plan: Plan, site: string): SitePlanSlice {
  const routing: Plan["routing"] = {};
  for (const [classId, targets] of Object.entries(plan.routing) as [keyof Plan["routing"], Plan["routing"][keyof Plan["routing"]]][]) {
    const mine = (targets ?? []).filter((t) => t.site === site);
    if (mine.length > 0) routing[classId] = mine;
  }
  const sitePlan = plan.sites.find((s) => s.site === site) ?? null;
  return { version: plan.version, revision: plan.revision ?? 0, policy: plan.policy, createdAtMs: plan.createdAtMs, validUntilMs: plan.validUntilMs, site: sitePlan, routing, models: {} };
}
