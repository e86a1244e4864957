import type { ClassId } from "../schemas/ids.ts";
import type { BatchRequestCost, DeferrableWork, DeferralInput } from "../schemas/deferral.ts";

/**
 * Backlog entries that share a window on the grid: the first slot they may run in (the first that
 * starts at or after their submission) and the last slot they are on time in (the last that ends
 * by their deadline; below 0 when even slot 0 ends too late). Entries of a cohort are
 * interchangeable to the LP, which moves fractions of a whole cohort; `requests` counts its
 * requests by class and `perSite` what all of them together take at each site that prices every
 * class of the cohort.
 */
export interface Cohort {
  first: number;
  last: number;
  entries: DeferrableWork[];
  requests: Map<ClassId, number>;
  total: number;
  /** Per site index: GPU-seconds and joules of the whole cohort there; absent where a class is not priced. */
  perSite: Array<{ gpuSeconds: number; energyJ: number } | undefined>;
}

/** The first slot that starts at or after `ms` (0 when it is already past). */
export function firstSlotFrom(startMs: number, slotMs: number, ms: number): number {
  return Math.max(0, Math.ceil((ms - startMs) / slotMs));
}

/** The last slot that ends by `deadlineMs`; -1 when slot 0 already ends after it. */
export function lastSlotBy(startMs: number, slotMs: number, deadlineMs: number): number {
  return Math.floor((deadlineMs - startMs) / slotMs) - 1;
}

/**
 * The backlog as cohorts, ordered by deadline (then first slot); entries within a cohort by
 * deadline, then id, so that whole requests are handed out deterministically.
 *
 * @example
 * const cohorts = cohortsOf(input); // two batches submitted in the same slot form one cohort
 */
export function cohortsOf(input: DeferralInput): Cohort[] {
  const byWindow = new Map<string, Cohort>();
  for (const w of input.backlog) {
    const first = firstSlotFrom(input.startMs, input.slotMs, w.submittedAtMs);
    const last = lastSlotBy(input.startMs, input.slotMs, w.deadlineMs);
    const key = `${first}|${last}`;
    let cohort = byWindow.get(key);
    if (!cohort) byWindow.set(key, (cohort = { first, last, entries: [], requests: new Map(), total: 0, perSite: [] }));
    cohort.entries.push(w);
    cohort.requests.set(w.classId, (cohort.requests.get(w.classId) ?? 0) + w.requests);
    cohort.total += w.requests;
  }
  const cohorts = [...byWindow.values()].sort((a, b) => a.last - b.last || a.first - b.first);
  for (const c of cohorts) {
    c.entries.sort((a, b) => a.deadlineMs - b.deadlineMs || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    c.perSite = input.sites.map((s) => cohortCost(c.requests, s.costs));
  }
  return cohorts;
}

function cohortCost(requests: ReadonlyMap<ClassId, number>, costs: Readonly<Record<string, BatchRequestCost>>): { gpuSeconds: number; energyJ: number } | undefined {
  let gpuSeconds = 0;
  let energyJ = 0;
  for (const [c, n] of requests) {
    const cost = costs[c];
    if (!cost) return undefined;
    gpuSeconds += n * cost.gpuSeconds;
    energyJ += n * cost.energyJ;
  }
  return { gpuSeconds, energyJ };
}
