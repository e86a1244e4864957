import type { BatchRequestCost, DeferralSite } from "../schemas/deferral.ts";

/**
 * The spare capacity left in one slot at each site, in GPU-seconds and joules, as whole requests
 * are handed out: nothing is ever placed beyond it.
 */
export class SlotRoom {
  private readonly gpuSeconds: number[];
  private readonly energyJ: number[];

  constructor(
    readonly sites: readonly DeferralSite[],
    readonly slot: number,
    slotS: number,
  ) {
    this.gpuSeconds = sites.map((s) => s.spareGpus[slot]! * slotS);
    this.energyJ = sites.map((s) => s.spareW[slot]! * slotS);
  }

  /** How many requests of a class (at `cost`) still fit at site index `s`, up to `wanted`. */
  fits(s: number, cost: BatchRequestCost | undefined, wanted: number): number {
    if (!cost || wanted <= 0) return 0;
    // A hair of tolerance so that work planned to fill a slot exactly is not refused by rounding error.
    const byGpu = Math.floor(this.gpuSeconds[s]! / cost.gpuSeconds + 1e-9);
    const byPower = cost.energyJ > 0 ? Math.floor(this.energyJ[s]! / cost.energyJ + 1e-9) : Infinity;
    return Math.max(0, Math.min(wanted, byGpu, byPower));
  }

  take(s: number, cost: BatchRequestCost, n: number): void {
    this.gpuSeconds[s] = Math.max(0, this.gpuSeconds[s]! - n * cost.gpuSeconds);
    this.energyJ[s] = Math.max(0, this.energyJ[s]! - n * cost.energyJ);
  }

  /** Site indices by this slot's carbon intensity, cleanest first (ties: input order). */
  cleanestFirst(): number[] {
    return this.sites.map((_, i) => i).sort((a, b) => this.sites[a]!.carbonGPerKwh[this.slot]! - this.sites[b]!.carbonGPerKwh[this.slot]! || a - b);
  }
}
