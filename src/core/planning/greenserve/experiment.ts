import { simulateDisaggregated, type DisaggregatedConfig, type DisaggregatedRun } from "../../engine/disaggregated-simulator.ts";
import type { EngineConfig, EngineRequest } from "../../engine/engine-simulator.ts";
import { gpuSpec } from "../../model/gpu-specs.ts";
import { llmSpec } from "../../model/llm-specs.ts";
import { forkRng, seededRng } from "../../ports/rng.ts";
import { poissonRequests } from "../../profiling/steady-load.ts";
import { lmsysLikeLengths, shareGptLikeLengths } from "../../workload/length-generators.ts";
import { ecoFreqClock, type EcoClock } from "./eco-clock.ts";
import { EcoFreq, GREENSERVE_A100_FREQS, type EcoFreqSlo } from "./eco-freq.ts";
import { EcoPred } from "./eco-pred.ts";
import { ecoRoute, GREENSERVE_DELTA_MHZ, type EcoRouteCase } from "./eco-route.ts";
import { profileIterations, trainOffline } from "./offline-profiling.ts";
import { PrefillArrivals, roundRobinPrefill } from "./prefill-arrivals.ts";

/** How the systems are set up; the workload comes separately (see `greenServeOnRequests`). */
export interface GreenServeSystemOptions {
  /** Seeds EcoPred's offline profiling. */
  seed: number;
  /** Default llama3.1-8b on A100-80GB at TP1, the paper's LLaMA-3.1-8B setup. */
  model?: string;
  gpu?: string;
  tp?: number;
  /** Default 2P2D (§VI-B). */
  prefillInstances?: number;
  decodeInstances?: number;
  /** Default 600 / 60 ms, the paper's SLOs for LLaMA-3.1-8B. */
  slo?: EcoFreqSlo;
  /** EcoFreq's set F; default {1005, 1410} MHz. Its ends are the static baselines' clocks. */
  freqsMhz?: readonly number[];
  deltaMhz?: number;
  kvTransferGBps?: number;
  /** NVML clock-set latency as an engine stall; default 0: GreenServe overlaps it with inference (§V-C). */
  clockSwitchDelayMs?: number;
  /** Decode batch limit (default 512, so batches can cross the 256 boundary of Fig. 19). */
  maxBatch?: number;
  /** EcoPred offline profiling samples per phase and frequency (default 1500). */
  offlineSamplesPerFreq?: number;
}

export interface GreenServeExperimentOptions extends GreenServeSystemOptions {
  rateRps: number;
  requests: number;
  /** Length distribution (GreenServe Table I); default ShareGPT-like. */
  dataset?: "sharegpt" | "lmsys";
}

/** One system's run: energy and SLO attainment as GreenServe reports them (Fig. 16). */
export interface ServingResult {
  system: "greenserve" | "ecofreq-only" | "greenference-site" | "static-max" | "static-sweet-spot";
  energyJ: number;
  prefillEnergyJ: number;
  decodeEnergyJ: number;
  /** Share of requests with TTFT <= S_P. */
  ttftAttainment: number;
  /** Share of requests with mean inter-token latency <= S_D (one-token outputs count as met). */
  itlAttainment: number;
  /** Share meeting both. */
  sloAttainment: number;
  meanTtftMs: number;
  meanItlMs: number;
  endS: number;
  /** EcoFreq systems: share of prefill and of decode iterations at the lowest frequency of F. */
  lowestFreqShare?: { prefill: number; decode: number };
  /** EcoFreq systems: iterations EcoPred learnt from online. */
  onlineSamples?: number;
  /** GreenServe and the Greenference site loop: how often each rule of Algorithm 2 decided. */
  routeRules?: Record<EcoRouteCase, number>;
}

export interface GreenServeExperiment {
  greenserve: ServingResult;
  ecoFreqOnly: ServingResult;
  /** Greenference's site loop: EcoFreq, and EcoRoute packing decode within GEMM tiles in case ❶a (`packedChoice`). */
  greenferenceSite: ServingResult;
  staticMax: ServingResult;
  staticSweetSpot: ServingResult;
}

/**
 * GreenServe's main experiment (§VI-B) on the engine model: Poisson arrivals at `rateRps` with
 * ShareGPT- or LMSYS-like lengths, served P/D-disaggregated (2P2D by default), by GreenServe
 * (EcoFreq + EcoPred online + EcoRoute), EcoFreq with round-robin decode routing (§VI-C),
 * Greenference's site loop (GreenServe with decode packed rather than spread in EcoRoute's case ❶a),
 * and the static baselines at max(F) (SGLang-1410) and min(F) (SGLang-1005, the sweet spot), which route
 * round-robin. Every system sees the same requests.
 *
 * @example
 * const r = greenServeExperiment({ rateRps: 4, requests: 800, seed: 1 });
 * r.greenserve.energyJ / r.staticMax.energyJ; // < 1
 */
export function greenServeExperiment(o: GreenServeExperimentOptions): GreenServeExperiment {
  const lengths = o.dataset === "lmsys" ? lmsysLikeLengths() : shareGptLikeLengths();
  const requests = poissonRequests(forkRng(seededRng(o.seed), 1), o.rateRps, o.requests, lengths);
  return greenServeOnRequests(requests, o);
}

/**
 * GreenServe and its baselines on a given workload (requests sorted by arrival), e.g. one whose
 * prefill/decode demand ratio shifts over time (GreenServe Appx. G, Table II).
 *
 * @example
 * const r = greenServeOnRequests(requests, { seed: 1 });
 * r.greenserve.energyJ / r.staticSweetSpot.energyJ;
 */
export function greenServeOnRequests(requests: readonly EngineRequest[], o: GreenServeSystemOptions): GreenServeExperiment {
  const llm = llmSpec(o.model ?? "llama3.1-8b");
  const gpu = gpuSpec(o.gpu ?? "A100-80GB");
  const tp = o.tp ?? 1;
  const freqs = [...(o.freqsMhz ?? GREENSERVE_A100_FREQS)];
  // Below the sweet spot a lower clock costs both energy and latency: GreenServe leaves those out of F.
  if (freqs.some((f) => f < gpu.power.voltageKneeMhz || f > gpu.maxMhz)) throw new Error(`EcoFreq's set must lie between ${gpu.type}'s sweet spot (${gpu.power.voltageKneeMhz} MHz) and max clock (${gpu.maxMhz} MHz), got ${freqs.join(", ")}`);
  const slo = o.slo ?? { ttftMs: 600, itlMs: 60 };
  const maxBatch = o.maxBatch ?? 512;
  const root = seededRng(o.seed);
  forkRng(root, 1); // the workload's stream in greenServeExperiment: EcoPred's stays where it was
  const offline = profileIterations({ llm, gpu, tp, freqsMhz: freqs, rng: forkRng(root, 2), maxBatch, ...(o.offlineSamplesPerFreq ? { samplesPerFreq: o.offlineSamplesPerFreq } : {}) });
  const base = { llm, gpu, tp, maxBatch, ...(o.clockSwitchDelayMs ? { clockSwitchDelayMs: o.clockSwitchDelayMs } : {}) };
  const nP = o.prefillInstances ?? 2;
  const nD = o.decodeInstances ?? 2;
  const kvTransferGBps = o.kvTransferGBps ?? 50;

  const staticRun = (system: ServingResult["system"], mhz: number) => {
    const c: EngineConfig = { ...base, clock: mhz };
    return summarise(system, requests, slo, simulateDisaggregated({ prefill: Array(nP).fill(c), decode: Array(nD).fill(c), kvTransferGBps }, requests));
  };
  const ecoRun = (system: ServingResult["system"], route: "round-robin" | "ecoroute" | "ecoroute-packed") => {
    const pred = new EcoPred({ freqsMhz: freqs, tileRows: gpu.tileRows });
    trainOffline(pred, offline);
    const eco = new EcoFreq(pred, slo);
    const queues = Array.from({ length: nP }, () => new PrefillArrivals());
    const clock = { clockSwitchDelayMs: o.clockSwitchDelayMs ?? 0, maxBatch };
    const prefillClocks = queues.map((arrivals) => ecoFreqClock(eco, { ...clock, arrivals }));
    const decodeClocks = Array.from({ length: nD }, () => ecoFreqClock(eco, clock));
    const router = route === "round-robin" ? undefined : ecoRoute({ decodeFreq: (n, kv) => eco.decodeFreq(n, kv), deltaMhz: o.deltaMhz ?? GREENSERVE_DELTA_MHZ, ...(route === "ecoroute-packed" ? { pack: { tileRows: gpu.tileRows } } : {}) });
    const config: DisaggregatedConfig = {
      prefill: prefillClocks.map((c) => ({ ...base, clock: c })),
      decode: decodeClocks.map((c) => ({ ...base, clock: c })),
      kvTransferGBps,
      routePrefill: roundRobinPrefill(queues),
      ...(router ? { routeDecode: router } : {}),
    };
    const result = summarise(system, requests, slo, simulateDisaggregated(config, requests));
    result.lowestFreqShare = { prefill: lowestShare(prefillClocks), decode: lowestShare(decodeClocks) };
    result.onlineSamples = [...prefillClocks, ...decodeClocks].reduce((s, c) => s + c.observed.count, 0);
    if (router) result.routeRules = { ...router.rules };
    return result;
  };
  return {
    greenserve: ecoRun("greenserve", "ecoroute"),
    ecoFreqOnly: ecoRun("ecofreq-only", "round-robin"),
    greenferenceSite: ecoRun("greenference-site", "ecoroute-packed"),
    staticMax: staticRun("static-max", freqs[freqs.length - 1]!),
    staticSweetSpot: staticRun("static-sweet-spot", freqs[0]!),
  };
}

function summarise(system: ServingResult["system"], requests: readonly EngineRequest[], slo: EcoFreqSlo, run: DisaggregatedRun): ServingResult {
  let ttftOk = 0;
  let itlOk = 0;
  let bothOk = 0;
  let ttftSum = 0;
  let itlSum = 0;
  let itlCount = 0;
  run.outcomes.forEach((out, i) => {
    const ttftMs = out.ttftS * 1e3;
    const hasItl = requests[i]!.outputTokens > 1;
    const itlMs = out.meanTbtS * 1e3;
    const t = ttftMs <= slo.ttftMs;
    const d = !hasItl || itlMs <= slo.itlMs;
    if (t) ttftOk++;
    if (d) itlOk++;
    if (t && d) bothOk++;
    if (Number.isFinite(ttftMs)) ttftSum += ttftMs;
    if (hasItl && Number.isFinite(itlMs)) [itlSum, itlCount] = [itlSum + itlMs, itlCount + 1];
  });
  const n = Math.max(1, requests.length);
  return {
    system,
    energyJ: run.energyJ,
    prefillEnergyJ: run.prefillEnergyJ,
    decodeEnergyJ: run.decodeEnergyJ,
    ttftAttainment: ttftOk / n,
    itlAttainment: itlOk / n,
    sloAttainment: bothOk / n,
    meanTtftMs: ttftSum / n,
    meanItlMs: itlCount > 0 ? itlSum / itlCount : 0,
    endS: run.endS,
  };
}

function lowestShare(clocks: readonly EcoClock[]): number {
  let low = 0;
  let all = 0;
  for (const c of clocks) {
    low += c.decisions[0] ?? 0;
    all += c.decisions.reduce((a, b) => a + b, 0);
  }
  return all > 0 ? low / all : 0;
}
