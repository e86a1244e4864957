import type { ClassId } from "../schemas/ids.ts";
import type { DeferralCommit, DeferralInput } from "../schemas/deferral.ts";
import type { Cohort } from "./cohorts.ts";
import type { SlotRoom } from "./slot-room.ts";

/**
 * Turns the LP's slot-0 plan (fluid requests per cohort and site) into whole requests that fit
 * slot 0's spare capacity. Cohorts due now (slot 0 is their last on-time slot, or they are already
 * late) go first and start all their requests that fit: at the sites the LP chose, in its
 * proportions, then wherever room is left, cleanest first. Other cohorts start the LP's amount
 * per class and site rounded to the nearest whole request, as far as it fits; what is left waits
 * for a later slot. Requests go to a cohort's entries in deadline order.
 *
 * @example
 * const commits = commitSlot(input, cohorts, planned, new SlotRoom(input.sites, 0, input.slotMs / 1000));
 */
export function commitSlot(input: DeferralInput, cohorts: readonly Cohort[], planned: ReadonlyArray<readonly number[]>, room: SlotRoom): DeferralCommit[] {
  const commits: DeferralCommit[] = [];
  const order = cohorts.map((_, i) => i).sort((a, b) => Number(cohorts[b]!.last <= 0) - Number(cohorts[a]!.last <= 0) || cohorts[a]!.last - cohorts[b]!.last);
  for (const ci of order) {
    const cohort = cohorts[ci]!;
    if (cohort.first > 0) continue; // not submitted yet
    const due = cohort.last <= 0;
    const atSites = planned[ci]!;
    const plannedTotal = atSites.reduce((a, b) => a + b, 0);
    const left = new Map(cohort.entries.map((e) => [e.id, e.requests]));
    for (const [classId, count] of cohort.requests) {
      const share = count / cohort.total;
      const wanted = due ? spread(count, plannedTotal > 0 ? atSites.map((x) => x / plannedTotal) : atSites.map(() => 0)) : atSites.map((x) => Math.round(x * share));
      let unplaced = due ? count : 0;
      const place = (s: number, n: number) => {
        const cost = input.sites[s]!.costs[classId];
        const fit = room.fits(s, cost, n);
        if (fit === 0) return;
        room.take(s, cost!, fit);
        unplaced -= fit;
        hand(cohort, classId, input.sites[s]!.site, fit, left, commits);
      };
      wanted.forEach((n, s) => place(s, n));
      if (due) for (const s of room.cleanestFirst()) if (unplaced > 0) place(s, unplaced);
    }
  }
  return merge(commits);
}

/** `count` whole requests split by `shares` (summing to 1, or all 0) with largest remainders. */
function spread(count: number, shares: readonly number[]): number[] {
  const exact = shares.map((x) => x * count);
  const out = exact.map(Math.floor);
  let rest = count - out.reduce((a, b) => a + b, 0);
  const byRemainder = exact.map((x, i) => [x - Math.floor(x), i] as const).sort((a, b) => b[0] - a[0] || a[1] - b[1]);
  for (const [remainder, i] of byRemainder) {
    if (rest <= 0 || remainder <= 0) break;
    out[i]!++;
    rest--;
  }
  return out;
}

/** Gives `n` requests of a class to the cohort's entries of that class, earliest deadline first. */
function hand(cohort: Cohort, classId: ClassId, site: DeferralCommit["site"], n: number, left: Map<string, number>, out: DeferralCommit[]): void {
  for (const e of cohort.entries) {
    if (n <= 0) return;
    if (e.classId !== classId) continue;
    const take = Math.min(n, left.get(e.id)!);
    if (take <= 0) continue;
    left.set(e.id, left.get(e.id)! - take);
    out.push({ workId: e.id, site, requests: take });
    n -= take;
  }
}

/** One commit per (entry, site). */
function merge(commits: readonly DeferralCommit[]): DeferralCommit[] {
  const byKey = new Map<string, DeferralCommit>();
  for (const c of commits) {
    const key = `${c.workId}\u0000${c.site}`;
    const had = byKey.get(key);
    byKey.set(key, had ? { ...had, requests: had.requests + c.requests } : { ...c });
  }
  return [...byKey.values()];
}
