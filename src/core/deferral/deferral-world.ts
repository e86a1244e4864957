import type { DeferrableWork, DeferralCommit, DeferralSite } from "../schemas/deferral.ts";
import { lastSlotBy } from "./cohorts.ts";

/**
 * A stretch of time for running a deferral policy slot by slot: the work submitted over it, what
 * the sites looked like in each slot, and what was known in advance.
 */
export interface DeferralWorld {
  startMs: number;
  slotMs: number;
  /** Slots in the stretch; work not run by its end is unfinished. */
  slots: number;
  work: readonly DeferrableWork[];
  /** The sites over slots [k, k + length): slot k as it is, later slots as forecast at the start of slot k. */
  sitesAt(k: number, length: number): DeferralSite[];
  /** The sites as slot k turned out (one-slot arrays): what commits are charged at. */
  actual(k: number): DeferralSite[];
}

/** How a policy did over a world: its commits per slot, their carbon at the actual intensities, and deadlines. */
export interface DeferralRun {
  commits: DeferralCommit[][];
  carbonG: number;
  energyKwh: number;
  requests: number;
  /** Requests run in a slot that ended after their deadline. */
  late: number;
  /** Requests not run by the end of the world. */
  unfinished: number;
  /** late + unfinished */
  deadlineMisses: number;
}

/** Tallies a policy's commits (index = slot) against the world's actual sites and the work's deadlines. */
export function tallyRun(world: DeferralWorld, commits: DeferralCommit[][]): DeferralRun {
  const byId = new Map(world.work.map((w) => [w.id, w]));
  let carbonG = 0;
  let energyJ = 0;
  let late = 0;
  let run = 0;
  commits.forEach((slot, k) => {
    if (slot.length === 0) return;
    const sites = new Map(world.actual(k).map((s) => [s.site as string, s]));
    for (const c of slot) {
      const w = byId.get(c.workId)!;
      const site = sites.get(c.site)!;
      const j = c.requests * site.costs[w.classId]!.energyJ;
      energyJ += j;
      carbonG += (j / 3.6e6) * site.carbonGPerKwh[0]!;
      run += c.requests;
      if (k > lastSlotBy(world.startMs, world.slotMs, w.deadlineMs)) late += c.requests;
    }
  });
  const requests = world.work.reduce((s, w) => s + w.requests, 0);
  const unfinished = requests - run;
  return { commits, carbonG, energyKwh: energyJ / 3.6e6, requests, late, unfinished, deadlineMisses: late + unfinished };
}
