import type { LpSolver } from "../ports/lp-solver.ts";
import type { DeferralPlan, DeferralSite } from "../schemas/deferral.ts";
import type { DeferralWorld } from "./deferral-world.ts";
import { planDeferral } from "./plan-deferral.ts";

/**
 * The offline optimum over a world: one LP over the whole stretch with perfect knowledge (every
 * submission and the actual sites in every slot), work fluid at request granularity. A bound the
 * online scheduler is measured against; its `plannedCarbonG` is the optimum's carbon.
 *
 * @example
 * const best = offlineOptimum(world, solver).plannedCarbonG;
 */
export function offlineOptimum(world: DeferralWorld, solver: LpSolver): DeferralPlan {
  const slots = Array.from({ length: world.slots }, (_, k) => world.actual(k));
  const sites: DeferralSite[] = slots[0]!.map((s, i) => ({
    site: s.site,
    costs: s.costs,
    carbonGPerKwh: slots.map((at) => at[i]!.carbonGPerKwh[0]!),
    spareGpus: slots.map((at) => at[i]!.spareGpus[0]!),
    spareW: slots.map((at) => at[i]!.spareW[0]!),
  }));
  return planDeferral({ startMs: world.startMs, slotMs: world.slotMs, sites, backlog: [...world.work] }, solver, { reserveLastSlot: false });
}
