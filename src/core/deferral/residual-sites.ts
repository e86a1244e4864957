import type { BatchRequestCost, DeferralSite, DeferralSlotUse } from "../schemas/deferral.ts";

/** GPU time (s) and energy (J) taken per (slot, site) of a grid. */
export type TakenCapacity = Array<Array<{ gpuSeconds: number; energyJ: number }>>;

/** Nothing taken yet over `slots` slots x `sites` sites. */
export function noneTaken(slots: number, sites: number): TakenCapacity {
  return Array.from({ length: slots }, () => Array.from({ length: sites }, () => ({ gpuSeconds: 0, energyJ: 0 })));
}

/** Adds `requests` requests at `cost` to (slot, site). */
export function take(taken: TakenCapacity, slot: number, site: number, cost: BatchRequestCost, requests: number): void {
  const cell = taken[slot]?.[site];
  if (!cell) return;
  cell.gpuSeconds += requests * cost.gpuSeconds;
  cell.energyJ += requests * cost.energyJ;
}

/** Adds a plan's uses of the slots from `fromSlot` on (slot 0 of a plan is committed separately, as whole requests). */
export function takePlanned(taken: TakenCapacity, uses: readonly DeferralSlotUse[], sites: readonly DeferralSite[], fromSlot: number): void {
  for (const u of uses) {
    if (u.slot < fromSlot) continue;
    const s = sites.findIndex((x) => x.site === u.site);
    const cell = taken[u.slot]?.[s];
    if (!cell) continue;
    cell.gpuSeconds += u.gpuSeconds;
    cell.energyJ += u.energyJ;
  }
}

/**
 * The sites with what is taken removed from each slot's spare GPUs and power (and from its firm
 * part), never below zero: what work planned after that may still use.
 *
 * @example
 * residualSites(sites, taken, 900); // a flex request planned around the batch work already placed
 */
export function residualSites(sites: readonly DeferralSite[], taken: TakenCapacity, slotS: number): DeferralSite[] {
  return sites.map((site, s) => {
    const gpus = (xs: readonly number[]) => xs.map((x, t) => Math.max(0, x - (taken[t]?.[s]?.gpuSeconds ?? 0) / slotS));
    const watts = (xs: readonly number[]) => xs.map((x, t) => Math.max(0, x - (taken[t]?.[s]?.energyJ ?? 0) / slotS));
    const spareGpus = gpus(site.spareGpus);
    const spareW = watts(site.spareW);
    return {
      ...site,
      spareGpus,
      spareW,
      ...(site.firmSpareGpus ? { firmSpareGpus: site.firmSpareGpus.map((x, t) => Math.min(x, spareGpus[t]!)) } : {}),
      ...(site.firmSpareW ? { firmSpareW: site.firmSpareW.map((x, t) => Math.min(x, spareW[t]!)) } : {}),
    };
  });
}
