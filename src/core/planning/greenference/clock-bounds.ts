import type { ClockSetting } from "../../schemas/plan.ts";
import type { OperatingOption } from "../operating-options.ts";

/**
 * The frequency bounds a site's EcoFreq-style iteration control runs in for an instance planned at
 * `mhz`: at most the planned clock, whose power the plan budgeted (power rises with clock), and at
 * least the lowest profiled clock at which the instance meets the SLO at any load (`options`: the
 * points of its variant, GPU, class and TP; those past the SLO do not count). The floor is not
 * the lowest clock that carries the planned load: the plan sizes for the peak of its period, and
 * below it EcoFreq judges each iteration against the SLO itself, running the top of the bounds
 * whenever requests wait. (Held at the planned load's clock, an overloaded hour's plan left every
 * bound one clock wide, and EcoFreq nothing to choose.)
 *
 * @example
 * ecoFreqBounds(options, 1590); // { mode: "policy", policy: "ecofreq", minMhz: 990, maxMhz: 1590 }
 */
export function ecoFreqBounds(options: readonly OperatingOption[], mhz: number): ClockSetting {
  let minMhz = mhz;
  for (const o of options) if (o.sloExcess === undefined && o.mhz < minMhz) minMhz = o.mhz;
  return { mode: "policy", policy: "ecofreq", minMhz, maxMhz: mhz };
}
