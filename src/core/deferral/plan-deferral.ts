import type { LpSolver } from "../ports/lp-solver.ts";
import type { DeferralCommit, DeferralInput, DeferralPlan, DeferralSlotUse } from "../schemas/deferral.ts";
import { cohortsOf, type Cohort } from "./cohorts.ts";
import { commitSlot } from "./commit-slot.ts";
import { deferralModel, type DeferralModelOptions } from "./deferral-model.ts";
import { SlotRoom } from "./slot-room.ts";

/**
 * The carbon-aware deferral scheduler, one step: plans the whole backlog over the grid (the LP of
 * `deferralModel`: least carbon, no deadline missed where capacity allows, work that cannot be on
 * time as soon as it fits) and commits slot 0 as whole requests within its spare capacity
 * (`commitSlot`). Called again each slot on the forecasts known then, it re-plans the rest. Pure
 * and synchronous: the solver comes in through the port. Where the solver gives no optimum, slot
 * 0 is filled greedily (earliest deadline first, cleanest site with room) and the plan says so.
 *
 * @example
 * const plan = planDeferral(DeferralInput.parse(body), solver);
 * for (const c of plan.commit) dispatch(c.workId, c.site, c.requests);
 */
export function planDeferral(input: DeferralInput, solver: LpSolver, options: DeferralModelOptions = {}): DeferralPlan {
  const head = { startMs: input.startMs, slotMs: input.slotMs };
  if (input.backlog.length === 0) return { ...head, method: "empty", commit: [], slots: [], late: [], plannedCarbonG: 0, notes: ["nothing to plan"] };
  const cohorts = cohortsOf(input);
  const { model, columns } = deferralModel(input, cohorts, options);
  const solution = solver.solve(model);
  const room = new SlotRoom(input.sites, 0, input.slotMs / 1000);
  if (solution.status !== "optimal") {
    const commit = commitSlot(input, cohorts.map((c) => ({ ...c, last: Math.min(c.last, 0) })), cohorts.map(() => input.sites.map(() => 0)), room);
    const slots = slotUses(input, commit);
    return { ...head, method: "greedy-fallback", commit, slots, late: [], plannedCarbonG: sum(slots.map((u) => u.carbonG)), notes: [`the LP solver answered "${solution.status}": slot 0 filled greedily, earliest deadline first, cleanest site with room`] };
  }
  const planned = cohorts.map(() => input.sites.map(() => 0));
  const late = cohorts.map(() => 0);
  const uses = new Map<string, DeferralSlotUse>();
  let lateOnFirm = 0;
  for (const [name, col] of columns) {
    const n = solution.values[name] ?? 0;
    if (n <= 1e-9) continue;
    const cohort = cohorts[col.cohort]!;
    if (col.scenario === "firm") {
      if (col.site < 0 || col.slot > cohort.last) lateOnFirm += n;
      continue;
    }
    if (col.site < 0 || col.slot > cohort.last) late[col.cohort]! += n;
    if (col.site < 0) continue;
    if (col.slot === 0) planned[col.cohort]![col.site]! += n;
    addUse(uses, input, cohort, col.slot, col.site, n);
  }
  const commit = commitSlot(input, cohorts, planned, room);
  const lateWork = lateEntries(cohorts, late);
  const slots = [...uses.values()].sort((a, b) => a.slot - b.slot || (a.site < b.site ? -1 : 1));
  const lateRequests = sum(lateWork.map((l) => l.requests));
  const notes = [
    `LP: ${cohorts.length} cohorts, ${columns.size} columns, ${Object.keys(model.constraints).length} rows over ${input.sites[0]!.carbonGPerKwh.length} slots x ${input.sites.length} sites${[...columns.values()].some((c) => c.scenario === "firm") ? ", deadlines kept on firm capacity too" : ""}`,
    ...(lateRequests > 0 ? [`capacity runs out before the deadline of ${round(lateRequests)} requests: they run as soon as they fit`] : []),
    ...(lateOnFirm > lateRequests + 1e-6 ? [`on firm capacity alone ${round(lateOnFirm)} requests would be late`] : []),
  ];
  return { ...head, method: "lp", commit, slots, late: lateWork, plannedCarbonG: sum(slots.map((u) => u.carbonG)), notes };
}

/** What whole-request commits use in slot 0, per site. */
function slotUses(input: DeferralInput, commit: readonly DeferralCommit[]): DeferralSlotUse[] {
  const classOf = new Map(input.backlog.map((w) => [w.id, w.classId]));
  const uses = new Map<string, DeferralSlotUse>();
  for (const c of commit) {
    const s = input.sites.findIndex((x) => x.site === c.site);
    const cost = input.sites[s]!.costs[classOf.get(c.workId)!]!;
    const u = uses.get(c.site) ?? uses.set(c.site, { slot: 0, site: c.site, requests: 0, gpuSeconds: 0, energyJ: 0, carbonG: 0 }).get(c.site)!;
    u.requests += c.requests;
    u.gpuSeconds += c.requests * cost.gpuSeconds;
    u.energyJ += c.requests * cost.energyJ;
    u.carbonG += ((c.requests * cost.energyJ) / 3.6e6) * input.sites[s]!.carbonGPerKwh[0]!;
  }
  return [...uses.values()];
}

function addUse(uses: Map<string, DeferralSlotUse>, input: DeferralInput, cohort: Cohort, slot: number, s: number, n: number): void {
  const site = input.sites[s]!;
  const use = cohort.perSite[s]!;
  const key = `${slot}|${s}`;
  const u = uses.get(key) ?? uses.set(key, { slot, site: site.site, requests: 0, gpuSeconds: 0, energyJ: 0, carbonG: 0 }).get(key)!;
  const energyJ = (n / cohort.total) * use.energyJ;
  u.requests += n;
  u.gpuSeconds += (n / cohort.total) * use.gpuSeconds;
  u.energyJ += energyJ;
  u.carbonG += (energyJ / 3.6e6) * site.carbonGPerKwh[slot]!;
}

/** Late requests of each cohort shared over its entries in proportion to their size. */
function lateEntries(cohorts: readonly Cohort[], late: readonly number[]): DeferralPlan["late"] {
  return cohorts.flatMap((c, ci) => (late[ci]! <= 1e-6 ? [] : c.entries.map((e) => ({ workId: e.id, requests: (late[ci]! * e.requests) / c.total }))));
}

function sum(xs: readonly number[]): number {
  return xs.reduce((a, b) => a + b, 0);
}

function round(x: number): number {
  return Math.round(x * 100) / 100;
}
