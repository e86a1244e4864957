import { z } from "zod";
import { PolicyKind } from "./fleet.ts";
import { EpochMs } from "./ids.ts";
import { ModelIdentity } from "./model-identity.ts";
import { Routing, SitePlan } from "./plan.ts";

/**
 * One site's slice of the current plan, as `GET /agent/v1/sites/:site/plan` returns it and the
 * agent applies it. `revision` counts the Planner-S corrections applied to the version (clocks and
 * weights only); `site` is null when the plan runs nothing at the site (the agent stops its instances).
 */
export const SitePlanSlice = z.object({
  version: z.number().int().nonnegative(),
  revision: z.number().int().nonnegative().default(0),
  policy: PolicyKind,
  createdAtMs: EpochMs,
  validUntilMs: EpochMs,
  site: SitePlan.nullable(),
  /** Per class, this site's instances and their weights. */
  routing: Routing.default({}),
  /** Per model: served name, weights, performance-model key; a model missing here is served and loaded by its id. */
  models: z.record(z.string().min(1).max(128), ModelIdentity).default({}),
});
export type SitePlanSlice = z.infer<typeof SitePlanSlice>;

/**
 * The ETag of a plan version and revision, as the agent sends it back in If-None-Match: a Planner-S
 * correction changes it, so agents pull corrected clocks as they pull new plans.
 *
 * @example
 * planEtag(7, 2); // '"plan-7.2"'
 */
export function planEtag(version: number, revision = 0): string {
  return `"plan-${version}.${revision}"`;
}
