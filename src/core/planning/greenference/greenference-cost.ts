import { SERVER_POWER_OVERHEAD } from "../../model/power.ts";
import type { PolicyWeights } from "../../schemas/fleet.ts";
import type { OperatingOption } from "../operating-options.ts";

/** Joules in a kilowatt-hour. */
const J_PER_KWH = 3.6e6;
/** Joules in a watt-hour. */
const J_PER_WH = 3600;
/**
 * Weight of a vanishing energy term (per Wh) added to every cost: it breaks ties towards less
 * energy and keeps costs positive when the weighted terms are all zero (e.g. accuracy alone with
 * one variant), which the LP's scaling needs. Far below any weight an operator sets.
 */
const TIE_BREAK_PER_WH = 1e-9;

/** Where an instance runs and what it serves: the site's carbon intensity and the variant's quality loss. */
export interface CostContext {
  carbonGPerKwh: number;
  /** Quality the variant loses against the best variant on offer, in [0, 1]. */
  qualityLoss: number;
}

/**
 * The combined policy's cost of one instance at an operating point, per second of running it:
 * weights x (carbon, gCO2: wall energy x the site's intensity; energy, Wh at the wall; latency,
 * seconds of median E2E summed over the requests it serves; accuracy, quality lost summed over
 * them). Per request served this is w.carbon x g/request + w.energy x Wh/request + w.latency x
 * s/request + w.accuracy x quality lost/request, so each weight prices one unit of its term.
 * Wall energy is the average GPU power x 1.82 (Heron's server overhead).
 *
 * @example
 * greenferenceCost(option, { carbonGPerKwh: 11, qualityLoss: 0 }, { carbon: 1, energy: 0, latency: 0.01, accuracy: 10 });
 */
export function greenferenceCost(o: Pick<OperatingOption, "gpuPowerW" | "loadRps" | "e2eMs">, at: CostContext, w: PolicyWeights): number {
  const wallW = o.gpuPowerW * SERVER_POWER_OVERHEAD;
  return (
    (w.carbon * wallW * at.carbonGPerKwh) / J_PER_KWH +
    ((w.energy + TIE_BREAK_PER_WH) * wallW) / J_PER_WH +
    (w.latency * o.loadRps * o.e2eMs) / 1000 +
    w.accuracy * o.loadRps * at.qualityLoss
  );
}
