import type { LengthPair } from "../../src/core/data/azure-trace.ts";
import type { EngineRequest } from "../../src/core/engine/engine-simulator.ts";
import type { LlmSpec } from "../../src/core/model/llm-specs.ts";
import { isolatedLatencyS, llfWindowS } from "../../src/core/planning/freesh/llf.ts";
import { miadEngineControl } from "../../src/core/planning/freesh/miad-engine-control.ts";
import type { MiadThresholds } from "../../src/core/planning/freesh/slo-thresholds.ts";
import type { FreeshConfigPoint } from "../../src/core/planning/freesh/pool-input.ts";
import { simulateRoutedEngine, type RoutedRequest } from "../../src/core/planning/freesh/queued-engine.ts";
import { clockBounds } from "../../src/core/model/clock-grid.ts";
import { ecoFreqClock, type EcoClock } from "../../src/core/planning/greenserve/eco-clock.ts";
import { EcoFreqModels } from "../../src/core/planning/greenserve/eco-freq-models.ts";
import type { ClockSetting } from "../../src/core/schemas/plan.ts";
import type { Slo } from "../../src/core/schemas/request-class.ts";
import type { ServingMode } from "../../src/core/planning/freesh/serving-modes.ts";

/** One worker of a plan: where it runs, the request type it serves, its mode and profile point. */
export interface Worker {
  site: number;
  type: number;
  mode: number;
  point: FreeshConfigPoint;
  /** A plan's clock setting, read by the "ecofreq" clock knob (absent: the GPU's whole range). */
  clock?: ClockSetting;
}

/** One worker a plan routes a request type to: its index, weight and the profile point whose Lat judges the type there. */
export interface RouteTo {
  worker: number;
  weight: number;
  point: FreeshConfigPoint;
}

/** A system's plan for one episode: its workers and how it types a request. */
export interface EpisodeServing {
  workers: readonly Worker[];
  classify: (r: LengthPair) => number;
  /**
   * Per type, where the plan's routing sends it (the combined policy's, whose plan may serve a
   * type on workers sized for another); absent: by worker type, as FREESH serves.
   */
  routes?: (type: number) => readonly RouteTo[];
  /** Per type of `classify`, what counts as an SLO breach for MIAD (FREESH Table 7); needed when MIAD sets the clocks. */
  miadThresholds?: readonly MiadThresholds[];
}

/**
 * The fast-timescale knobs: clocks by FREESH's MIAD, at the top clock, or by EcoFreq within each
 * worker's planned bounds (the combined policy's); LLF router queues, else FCFS.
 */
export interface Knobs {
  clock: "miad" | "top" | "ecofreq";
  llf: boolean;
}

export interface ServedRequest {
  ttftS: number;
  e2eS: number;
  /** Mean gap between output tokens, s (NaN for one-token answers). */
  tbtS: number;
  /** FREESH's Lat on the worker that served it (its SLO is 5 x Lat). */
  latS: number;
}

export interface ServedEpisode {
  /** Energy per site and 5-minute slot of the episode (slots past its end when work ran over), J. */
  energyJ: number[][];
  served: ServedRequest[];
  /** Requests whose type had no worker (with `routes`: no route) in the plan, sent to the plan's other workers. */
  untyped: number;
}

export interface ServeOptions {
  llm: LlmSpec;
  modes: readonly ServingMode[];
  sites: number;
  durationS: number;
  slotS: number;
  /** Per request type, the TTFT and TBT SLOs (FREESH Table 7) that EcoFreq targets on the workers serving it. */
  slo: readonly Slo[];
}

/**
 * Serves one episode's requests (arrivals relative to its start) on a plan: each request is typed
 * by the plan's classifier and sent by smooth weighted round robin to the plan's routes of its
 * type where it has them (judged by the route's point), else to a worker of its type, weighted by
 * the workers' profiled capacity (a type without workers goes to all of them); every worker is an
 * engine behind FREESH's router queue (LLF or FCFS) at the knob's clocks, kept on until
 * the episode ends. Energy is booked per site and slot.
 */
export function serveEpisode(requests: readonly EngineRequest[], plan: EpisodeServing, knobs: Knobs, o: ServeOptions): ServedEpisode {
  if (plan.workers.length === 0) throw new Error("a plan without workers cannot serve");
  const thresholds = plan.miadThresholds;
  if (knobs.clock === "miad" && !thresholds) throw new Error("MIAD needs the plan's per-type thresholds (miadThresholds)");
  const queues: number[][] = plan.workers.map(() => []);
  const types = requests.map((r) => plan.classify(r));
  // Per type: the workers it may go to, their weights, and with routes the point that judges it on each.
  const pickers = new Map<number, { to: readonly number[]; pick: () => number; points?: readonly FreeshConfigPoint[]; typed: boolean }>();
  const points: (FreeshConfigPoint | undefined)[] = requests.map(() => undefined);
  let untyped = 0;
  requests.forEach((_, i) => {
    const type = types[i]!;
    let picker = pickers.get(type);
    if (!picker) {
      const routes = (plan.routes?.(type) ?? []).filter((t) => t.weight > 0);
      const own = plan.workers.flatMap((w, k) => (w.type === type ? [k] : []));
      const to = own.length > 0 ? own : plan.workers.map((_, k) => k);
      picker =
        routes.length > 0
          ? { to: routes.map((t) => t.worker), pick: pickFrom(routes.map((t) => t.weight)), points: routes.map((t) => t.point), typed: true }
          : { to, pick: pickFrom(to.map((k) => plan.workers[k]!.point.maxQps)), typed: own.length > 0 && !plan.routes };
      pickers.set(type, picker);
    }
    if (!picker.typed) untyped++;
    const j = picker.pick();
    points[i] = picker.points?.[j];
    queues[picker.to[j]!]!.push(i);
  });
  const energyJ: number[][] = Array.from({ length: o.sites }, () => []);
  const served: ServedRequest[] = requests.map(() => ({ ttftS: NaN, e2eS: NaN, tbtS: NaN, latS: NaN }));
  plan.workers.forEach((w, k) => {
    const mode = o.modes[w.mode]!;
    const routed: RoutedRequest[] = queues[k]!.map((i) => {
      const r = requests[i]!;
      const point = points[i] ?? w.point;
      const latS = isolatedLatencyS(r.outputTokens, point.tbtMs / 1e3, point.ttftMs / 1e3);
      return { arrivalS: r.arrivalS, inputTokens: r.inputTokens, outputTokens: r.outputTokens, latS, windowS: llfWindowS(latS) };
    });
    const miad = knobs.clock === "miad" ? miadEngineControl(mode.gpu, queues[k]!.map((i) => ({ arrivalS: requests[i]!.arrivalS, thresholds: thresholds![types[i]!]! }))) : undefined;
    const clock = miad?.clock ?? (knobs.clock === "ecofreq" ? workerEcoFreq(o.llm, mode, w.clock, strictestSlo(o.slo, [w.type, ...queues[k]!.map((i) => types[i]!)])) : mode.gpu.maxMhz);
    const run = simulateRoutedEngine({ llm: o.llm, gpu: mode.gpu, tp: mode.tp, clock, ...(miad ? { onProgress: miad.onProgress } : {}) }, routed, knobs.llf ? "llf" : "fcfs", { untilS: o.durationS, slotS: o.slotS });
    run.energyBySlotJ.forEach((j, slot) => (energyJ[w.site]![slot] = (energyJ[w.site]![slot] ?? 0) + j));
    queues[k]!.forEach((i, n) => {
      const out = run.outcomes[n]!;
      served[i] = { ttftS: out.ttftS, e2eS: out.e2eS, tbtS: out.meanTbtS, latS: routed[n]!.latS };
    });
  });
  return { energyJ: energyJ.map((row) => Array.from(row, (x) => x ?? 0)), served, untyped };
}

/** Smooth weighted round robin (nginx's) over positions 0..n-1 with these weights. */
function pickFrom(weights: readonly number[]): () => number {
  const weight = weights.map((w) => Math.max(1e-9, w));
  const total = weight.reduce((a, b) => a + b, 0);
  const current = weight.map(() => 0);
  return () => {
    let best = 0;
    current.forEach((_, j) => {
      current[j]! += weight[j]!;
      if (current[j]! > current[best]!) best = j;
    });
    current[best]! -= total;
    return best;
  };
}

/** EcoPred's offline profiles, shared by every worker of every episode (one per model, GPU, TP and frequency set). */
const ECO_MODELS = new EcoFreqModels();

/**
 * EcoFreq within a worker's planned clock bounds (the GPU's whole range without a plan's), as the
 * host agent's EcoFreq controller runs it on an engine: GreenServe's Algorithm 1 per iteration
 * (`ecoFreqClock`), with EcoPred trained offline on the engine model and refined online; a
 * prefill runs at the lowest frequency whose predicted time meets the TTFT SLO, a decode at the
 * lowest that meets the TBT SLO, and the top of the set while requests wait.
 *
 * @example
 * simulateEngine({ llm, gpu: mode.gpu, tp: mode.tp, clock: workerEcoFreq(llm, mode, { mode: "policy", policy: "ecofreq", minMhz: 1005, maxMhz: 1410 }, { ttftMs: 300, tbtMs: 150 }) }, requests);
 */
export function workerEcoFreq(llm: LlmSpec, mode: ServingMode, clock: ClockSetting | undefined, slo: Slo): EcoClock {
  return ecoFreqClock(ECO_MODELS.build(llm, mode.gpu, mode.tp, clock ? clockBounds(clock) : { minMhz: mode.gpu.minMhz, maxMhz: mode.gpu.maxMhz }, slo));
}

/** The tightest TTFT and TBT SLOs among the request types a worker serves. */
function strictestSlo(slo: readonly Slo[], types: readonly number[]): Slo {
  const of = types.map((t) => slo[t]!);
  return { ttftMs: Math.min(...of.map((x) => x.ttftMs)), tbtMs: Math.min(...of.map((x) => x.tbtMs)) };
}
