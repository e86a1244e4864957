import type { ClassId } from "../../schemas/ids.ts";
import type { ClassScheme } from "../../schemas/request-class.ts";
import type { TraceRequest } from "../../data/azure-trace.ts";
import type { RateTemplate } from "../../workload/week-template.ts";
import { classify, classIds, classShares } from "../../workload/class-scheme.ts";
import type { FleetWorkload } from "./fleet-types.ts";

/**
 * A trace replayed as per-class rates: arrivals counted per `binS` and divided by it, scaled by
 * `multiplier`. Reading past the trace's end is an error, not a wrap-around.
 */
export function traceRates(requests: readonly TraceRequest[], scheme: ClassScheme, multiplier: number, binS = 60): FleetWorkload & { coveredS: number } {
  const classes = classIds(scheme);
  const last = requests.reduce((m, r) => Math.max(m, r.arrivalS), 0);
  const bins = Math.floor(last / binS) + 1;
  const counts = new Map<ClassId, Float64Array>(classes.map((c) => [c, new Float64Array(bins)]));
  for (const r of requests) counts.get(classify(scheme, r.inputTokens, r.outputTokens))![Math.floor(r.arrivalS / binS)]! += 1;
  const coveredS = bins * binS;
  return {
    classes,
    coveredS,
    rateRps(tS, c) {
      const b = Math.floor(tS / binS);
      if (b >= bins) throw new RangeError(`the trace covers ${coveredS} s; t = ${tS} s is past its end`);
      return (counts.get(c)![b]! / binS) * multiplier;
    },
  };
}

/** A synthetic rate template split over classes by the trace's class shares. */
export function templateRates(template: RateTemplate, scheme: ClassScheme, requests: readonly TraceRequest[], multiplier: number): FleetWorkload {
  const shares = classShares(scheme, requests);
  const classes = classIds(scheme);
  const weekS = template.slotS * template.ratesPerS.length;
  return {
    classes,
    rateRps(tS, c) {
      if (tS >= weekS) throw new RangeError(`the synthetic template covers ${weekS} s; t = ${tS} s is past its end`);
      return template.ratesPerS[Math.floor(tS / template.slotS)]! * (shares[c] ?? 0) * multiplier;
    },
  };
}
