import { z } from "zod";
import { PolicyKind } from "../../src/core/schemas/fleet.ts";
import { EpochMs } from "../../src/core/schemas/ids.ts";
import { ModelIdentity } from "../../src/core/schemas/model-identity.ts";
import { Routing, SitePlan } from "../../src/core/schemas/plan.ts";

/**
 * One site's slice of the current plan, as `GET /agent/v1/sites/:site/plan` returns it (the edge's
 * `SitePlanSlice` in durable-objects/plan-store.ts). `site` is null when the plan runs nothing here.
 */
export const SitePlanSlice = z.object({
  version: z.number().int().nonnegative(),
  policy: PolicyKind,
  createdAtMs: EpochMs,
  validUntilMs: EpochMs,
  site: SitePlan.nullable(),
  routing: Routing.default({}),
  /** Per model: served name, weights, performance-model key; a model missing here is served and loaded by its id. */
  models: z.record(z.string().min(1).max(128), ModelIdentity).default({}),
});
export type SitePlanSlice = z.infer<typeof SitePlanSlice>;

/** The version a plan body claims, even when the body is otherwise invalid (for the refusal report). */
export function claimedVersion(body: unknown): number | undefined {
  const v = (body as { version?: unknown } | null)?.version;
  return typeof v === "number" && Number.isSafeInteger(v) && v >= 0 ? v : undefined;
}
