import type { LengthPair, TraceRequest } from "../../data/azure-trace.ts";
import type { EngineRequest } from "../../engine/engine-simulator.ts";
import { forkRng, randomIndex, seededRng } from "../../ports/rng.ts";
import type { ClassId } from "../../schemas/ids.ts";
import type { ClassScheme } from "../../schemas/request-class.ts";
import { classify } from "../../workload/class-scheme.ts";
import type { FleetWorkload } from "../fleet/fleet-types.ts";
import { poissonCount } from "../fleet/poisson-count.ts";

/** One request of a per-request fleet run: arrival (s), lengths, and the class the edge gives it. */
export interface FleetRequest extends EngineRequest {
  classId: ClassId;
}

/**
 * The requests of a trace that arrive before `durationS`, in arrival order, each classified by
 * the scheme on its true lengths (a perfect output-length prediction, as the fluid simulator
 * assumes).
 */
export function traceFleetRequests(requests: readonly TraceRequest[], scheme: ClassScheme, durationS: number): FleetRequest[] {
  return requests.filter((r) => r.arrivalS < durationS).map((r) => ({ arrivalS: r.arrivalS, inputTokens: r.inputTokens, outputTokens: r.outputTokens, classId: classify(scheme, r.inputTokens, r.outputTokens) }));
}

/**
 * Requests drawn from a workload's per-class rates, as the fluid simulator draws its arrivals:
 * each second a Poisson count per class around the rate at that second, spread uniformly over
 * the second, with lengths resampled from that class's requests in `lengths`. Sorted by arrival;
 * deterministic for a seed.
 *
 * @example
 * const requests = workloadFleetRequests(traceRates(trace, scheme, 20), scheme, trace, 3600, 1);
 */
export function workloadFleetRequests(workload: FleetWorkload, scheme: ClassScheme, lengths: readonly LengthPair[], durationS: number, seed: number): FleetRequest[] {
  const pools = new Map<ClassId, LengthPair[]>(workload.classes.map((c) => [c, []]));
  for (const l of lengths) pools.get(classify(scheme, l.inputTokens, l.outputTokens))?.push(l);
  const counts = forkRng(seededRng(seed), 11);
  const draws = forkRng(seededRng(seed), 12);
  const out: FleetRequest[] = [];
  for (let t = 0; t < durationS; t++) {
    for (const c of workload.classes) {
      const pool = pools.get(c)!;
      const n = poissonCount(counts, workload.rateRps(t, c));
      if (n > 0 && pool.length === 0) throw new Error(`class ${c} has a rate at t = ${t} s but no request lengths to draw from`);
      for (let k = 0; k < n; k++) {
        const l = pool[randomIndex(draws, pool.length)]!;
        out.push({ arrivalS: t + draws.next(), inputTokens: l.inputTokens, outputTokens: l.outputTokens, classId: c });
      }
    }
  }
  return out.sort((a, b) => a.arrivalS - b.arrivalS);
}
