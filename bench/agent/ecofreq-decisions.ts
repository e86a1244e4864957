import { simulateEngine, type IterationState } from "../../src/core/engine/engine-simulator.ts";
import { gpuSpec } from "../../src/core/model/gpu-specs.ts";
import { llmSpec } from "../../src/core/model/llm-specs.ts";
import { seededRng } from "../../src/core/ports/rng.ts";
import { poissonRequests } from "../../src/core/profiling/steady-load.ts";
import { EcoFreqIterationController } from "../../host-agent/controllers/ecofreq-controller.ts";
import { EcoFreqModels } from "../../src/core/planning/greenserve/eco-freq-models.ts";
import { instanceSlo } from "../../host-agent/controllers/instance-slo.ts";
import { percentiles, type Percentiles } from "./percentiles.ts";

export interface EcoFreqDecisionBench {
  decision_us: Percentiles & { mean: number; max: number };
  decisions: number;
  /** Decisions per frequency of the set, in the order of `freqs_mhz`. */
  per_freq: number[];
  inputs: { model: string; gpu: string; tp: number; bounds_mhz: [number, number]; freqs_mhz: readonly number[]; slo_ms: { ttft: number; itl: number }; requests: number; rate_rps: number; warmup_requests: number; seed: number; simulated: true };
}

const MODEL = "llama3.1-8b";
const GPU = "H100-80GB";
const BOUNDS = { minMhz: 1005, maxMhz: 1980 };

/**
 * The agent's per-iteration EcoFreq decision (`EcoFreqIterationController.chooseMhz`: the queue
 * check, the phase budget and EcoPred's predictions per frequency, with its online update) timed
 * one call at a time while the core engine simulator runs a busy Poisson workload through it (16
 * req/s of 100..1600 prompt and 20..420 output tokens on one H100, where about 30% of the decisions
 * come out at the max clock), so every decision is made on a real queue/batch state. A first,
 * shorter run with its own controller warms the JIT.
 *
 * @example
 * runEcoFreqDecisionBench(() => process.hrtime.bigint()).decision_us; // { p50: 0.15, p99: 0.8, ... }
 */
export function runEcoFreqDecisionBench(now: () => bigint, o = { requests: 20_000, rateRps: 16, warmup: 3_000, seed: 7 }): EcoFreqDecisionBench {
  const llm = llmSpec(MODEL);
  const gpu = gpuSpec(GPU);
  const slo = instanceSlo(llm, gpu, 1, "MM", { multiple: 5 });
  const models = new EcoFreqModels();
  const lengths = (r: { next(): number }) => ({ inputTokens: 100 + Math.floor(r.next() * 1500), outputTokens: 20 + Math.floor(r.next() * 400) });
  const run = (requests: number, seed: number, times?: number[]) => {
    const controller = new EcoFreqIterationController(models.build(llm, gpu, 1, BOUNDS, slo), (b) => b);
    const clock = (s: IterationState) => {
      const t0 = now();
      const mhz = controller.chooseMhz(s, BOUNDS);
      times?.push(Number(now() - t0) / 1e3);
      return mhz;
    };
    simulateEngine({ llm, gpu, tp: 1, clock }, poissonRequests(seededRng(seed), o.rateRps, requests, lengths));
    return controller;
  };
  run(o.warmup, o.seed + 1);
  const times: number[] = [];
  const controller = run(o.requests, o.seed, times);
  return {
    decision_us: { ...percentiles(times), mean: round(times.reduce((s, t) => s + t, 0) / times.length), max: round(times.reduce((m, t) => Math.max(m, t), 0)) },
    decisions: times.length,
    per_freq: [...controller.hook.decisions],
    inputs: { model: MODEL, gpu: GPU, tp: 1, bounds_mhz: [BOUNDS.minMhz, BOUNDS.maxMhz], freqs_mhz: controller.eco.freqsMhz, slo_ms: { ttft: round(slo.ttftMs), itl: round(slo.tbtMs) }, requests: o.requests, rate_rps: o.rateRps, warmup_requests: o.warmup, seed: o.seed, simulated: true },
  };
}

const round = (x: number) => Math.round(x * 1000) / 1000;
