import { kvBytesPerToken } from "../model/llm-specs.ts";
import { EngineInstance, type EngineConfig, type EngineRequest } from "./engine-instance.ts";
import { emptyOutcomes, tbtOf, type EngineRun } from "./engine-simulator.ts";
import { MinHeap } from "./min-heap.ts";

/** What a decode router sees of each decode instance when a prefilled request needs a home. */
export interface DecodeInstanceState {
  index: number;
  waiting: number;
  running: number;
  kvTokens: number;
}

export interface DisaggregatedConfig {
  prefill: readonly EngineConfig[];
  decode: readonly EngineConfig[];
  /** KV transfer bandwidth from a prefill to a decode instance, GB/s. */
  kvTransferGBps: number;
  /** Picks the decode instance for a prefilled request (default: round-robin). GreenServe's EcoRoute plugs in here. */
  routeDecode?: (request: EngineRequest, decode: readonly DecodeInstanceState[]) => number;
  /** Picks the prefill instance for an arrival (default: round-robin). */
  routePrefill?: (request: EngineRequest, prefill: readonly DecodeInstanceState[]) => number;
}

export interface DisaggregatedRun extends Omit<EngineRun, "peakPowerW" | "clockSwitches" | "requestSeconds"> {
  prefillEnergyJ: number;
  decodeEnergyJ: number;
  /** Iterations per instance, prefill instances first. */
  iterationsPerInstance: number[];
}

/**
 * Prefill/decode disaggregation (Splitwise, DistServe, GreenServe): prefill instances run prompts
 * and produce the first token; the KV cache then travels to a decode instance (bytes / bandwidth)
 * which generates the rest. Instances are stepped in global time order, one iteration at a time,
 * so a hand-off is seen by the decode side exactly when it lands.
 */
export function simulateDisaggregated(config: DisaggregatedConfig, requests: readonly EngineRequest[]): DisaggregatedRun {
  if (config.prefill.length === 0 || config.decode.length === 0) throw new Error("disaggregated serving needs at least one prefill and one decode instance");
  const outcomes = emptyOutcomes(requests.length);
  let nextDecode = 0;
  let nextPrefill = 0;
  const stateOf = (engines: EngineInstance[]) => engines.map((e, index) => ({ index, ...e.load }));
  const decode: EngineInstance[] = config.decode.map((c) => new EngineInstance({ ...c, role: "decode" }, requests, outcomes));
  // A prefill iteration runs whole when it starts, so its hand-offs are known before their time:
  // they wait here and are routed when they happen, on the decode instances' state then.
  const handOffs = new MinHeap();
  const handOff = (index: number, atS: number) => handOffs.push(atS, index);
  const route = (index: number, atS: number) => {
    const r = requests[index]!;
    const chosen = config.routeDecode ? config.routeDecode(r, stateOf(decode)) : nextDecode++ % decode.length;
    const bytes = (r.inputTokens + 1) * kvBytesPerToken(config.decode[chosen]!.llm);
    decode[chosen]!.enqueue(index, atS + bytes / (config.kvTransferGBps * 1e9));
  };
  const prefill = config.prefill.map((c) => new EngineInstance({ ...c, role: "prefill" }, requests, outcomes, handOff));
  const all = [...prefill, ...decode];
  let next = 0;
  for (;;) {
    let engine: EngineInstance | undefined;
    let at = Infinity;
    for (const e of all) {
      const t = e.nextEventS();
      if (t < at) {
        at = t;
        engine = e;
      }
    }
    const arrival = next < requests.length ? requests[next]!.arrivalS : Infinity;
    const handOffS = handOffs.peekKey();
    if (!engine && arrival === Infinity && handOffS === Infinity) break;
    if (handOffS <= at && handOffS <= arrival) {
      route(handOffs.pop(), handOffS);
      continue;
    }
    if (arrival <= at) {
      const r = requests[next]!;
      const chosen = config.routePrefill ? config.routePrefill(r, stateOf(prefill)) : nextPrefill++ % prefill.length;
      prefill[chosen]!.idleUntil(arrival);
      prefill[chosen]!.enqueue(next++, arrival);
      continue;
    }
    engine!.step();
  }
  const endS = Math.max(...all.map((e) => e.nowS));
  for (const e of all) e.idleUntil(endS);
  const sum = (es: EngineInstance[]) => es.reduce((s, e) => s + e.energyJ, 0);
  return {
    outcomes,
    tbt: tbtOf(decode),
    energyJ: sum(all),
    prefillEnergyJ: sum(prefill),
    decodeEnergyJ: sum(decode),
    endS,
    iterations: all.reduce((s, e) => s + e.iterations, 0),
    iterationsPerInstance: all.map((e) => e.iterations),
    rejected: all.reduce((s, e) => s + e.rejected, 0),
  };
}
