import type { ClockSetting } from "../../schemas/plan.ts";
import type { OperatingOption } from "../operating-options.ts";

/**
 * The frequency bounds a site's EcoFreq-style iteration control runs in for an instance planned at
 * (`mhz`, `loadRps`): at most the planned clock, whose power the plan budgeted (power rises with
 * clock), and at least the lowest profiled clock that still carries the planned load within the
 * SLO (`options` are the SLO-meeting points of the instance's variant, GPU, class and TP).
 *
 * @example
 * ecoFreqBounds(options, 1590, 1.2); // { mode: "policy", policy: "ecofreq", minMhz: 1200, maxMhz: 1590 }
 */
export function ecoFreqBounds(options: readonly OperatingOption[], mhz: number, loadRps: number): ClockSetting {
  let minMhz = mhz;
  for (const o of options) if (o.loadRps >= loadRps * (1 - 1e-9) && o.mhz < minMhz) minMhz = o.mhz;
  return { mode: "policy", policy: "ecofreq", minMhz, maxMhz: mhz };
}
