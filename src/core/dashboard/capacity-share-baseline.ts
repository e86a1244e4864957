import { carbonGrams, siteCarbonIntensity } from "../routing/carbon.ts";
import type { Fleet } from "../schemas/fleet.ts";
import { COUNTERS, parseSeries } from "./counter-series.ts";

/** The baseline the dashboard compares against, and how its figures are made. */
export const CAPACITY_SHARE_BASELINE = {
  name: "carbon-blind capacity-share routing",
  method:
    "The same requests with the same energy (per the edge's receipts), spread over all fleet sites in proportion to their GPU count " +
    "(all GPU types counted alike) regardless of carbon: each joule counts at the GPU-weighted mean carbon intensity of the fleet's sites " +
    "(the intensities routing used) when the edge flushed its counters, within seconds of the request. " +
    "This baseline moves load, not clocks, so its energy is the measured energy by construction and is not reported apart; " +
    "an energy baseline (e.g. every instance at max clock) would need each request's energy at another clock, which the edge does not record.",
} as const;

/**
 * The GPU-weighted mean intensity (gCO2e/kWh) of the fleet's sites, each at the intensity routing
 * uses for it (fleet value, latest reported, or the default).
 *
 * @example
 * capacityShareIntensity(fleet, new Map([["de-1", 300]])); // 175 for 8 GPUs at 50 and 8 at 300
 */
export function capacityShareIntensity(fleet: Fleet, reported: ReadonlyMap<string, number>): number {
  let gpus = 0;
  let weighted = 0;
  for (const site of fleet.sites) {
    const n = site.gpus.reduce((sum, g) => sum + g.count, 0);
    gpus += n;
    weighted += n * siteCarbonIntensity(site, reported.get(site.id)).gPerKwh;
  }
  return weighted / gpus;
}

/**
 * gCO2e of `energyJ` joules under the baseline.
 *
 * @example
 * baselineCarbonGrams(3.6e6, fleet, new Map()); // the mean intensity in grams: 1 kWh
 */
export function baselineCarbonGrams(energyJ: number, fleet: Fleet, reported: ReadonlyMap<string, number>): number {
  return carbonGrams(energyJ, capacityShareIntensity(fleet, reported));
}

/**
 * Counter deltas from the edge with the baseline's carbon for their energy added under
 * COUNTERS.baselineCarbonG, at the intensities in force now (ControlDO adds them as they arrive).
 * Without a fleet or new energy the deltas come back as they are.
 *
 * @example
 * withBaselineCarbon({ 'greenference_energy_joules_total{site="a"}': 3.6e6 }, fleet, carbon); // adds the baseline grams of 1 kWh
 */
export function withBaselineCarbon(deltas: Record<string, number>, fleet: Fleet | null, reported: ReadonlyMap<string, number>): Record<string, number> {
  let energyJ = 0;
  for (const [key, delta] of Object.entries(deltas)) if (delta > 0 && Number.isFinite(delta) && parseSeries(key).name === COUNTERS.energyJ) energyJ += delta;
  if (!fleet || energyJ === 0) return deltas;
  return { ...deltas, [COUNTERS.baselineCarbonG]: (deltas[COUNTERS.baselineCarbonG] ?? 0) + baselineCarbonGrams(energyJ, fleet, reported) };
}
