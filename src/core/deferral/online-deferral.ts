import type { LpSolver } from "../ports/lp-solver.ts";
import type { DeferrableWork, DeferralCommit, DeferralPlan } from "../schemas/deferral.ts";
import { firstSlotFrom, lastSlotBy } from "./cohorts.ts";
import type { DeferralRun, DeferralWorld } from "./deferral-world.ts";
import { tallyRun } from "./deferral-world.ts";
import { planDeferral } from "./plan-deferral.ts";

/**
 * The deferral scheduler run online over a world: at the start of each slot it plans the work
 * submitted so far and not yet run on the forecasts known then (`world.sitesAt`), over a grid
 * reaching the latest deadline, and commits only that slot; the next slot re-plans. Returns the
 * run (charged at the actual intensities) and each slot's plan.
 *
 * @example
 * const { run } = runOnlineDeferral(world, solver);
 * run.deadlineMisses; // 0 where capacity allowed
 */
export function runOnlineDeferral(world: DeferralWorld, solver: LpSolver): { run: DeferralRun; plans: Array<DeferralPlan | undefined> } {
  const left = new Map(world.work.map((w) => [w.id, w.requests]));
  const commits: DeferralCommit[][] = [];
  const plans: Array<DeferralPlan | undefined> = [];
  for (let k = 0; k < world.slots; k++) {
    const slotStartMs = world.startMs + k * world.slotMs;
    const backlog: DeferrableWork[] = world.work.flatMap((w) => {
      const n = left.get(w.id)!;
      return n > 0 && firstSlotFrom(world.startMs, world.slotMs, w.submittedAtMs) <= k ? [{ ...w, requests: n }] : [];
    });
    if (backlog.length === 0) {
      commits.push([]);
      plans.push(undefined);
      continue;
    }
    const lastDue = backlog.reduce((m, w) => Math.max(m, lastSlotBy(world.startMs, world.slotMs, w.deadlineMs)), k);
    const length = Math.max(1, Math.min(world.slots, lastDue + 1) - k);
    const plan = planDeferral({ startMs: slotStartMs, slotMs: world.slotMs, sites: world.sitesAt(k, length), backlog }, solver);
    for (const c of plan.commit) left.set(c.workId, left.get(c.workId)! - c.requests);
    commits.push(plan.commit);
    plans.push(plan);
  }
  return { run: tallyRun(world, commits), plans };
}
