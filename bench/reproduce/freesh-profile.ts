import type { LengthPair } from "../../src/core/data/azure-trace.ts";
import { simulateEngine } from "../../src/core/engine/engine-simulator.ts";
import type { LlmSpec } from "../../src/core/model/llm-specs.ts";
import type { FreeshConfigPoint } from "../../src/core/planning/freesh/pool-input.ts";
import { binLengths, type ServingMode } from "../../src/core/planning/freesh/serving-modes.ts";
import { exponential, randomIndex, seededRng } from "../../src/core/ports/rng.ts";
import { estimatedCapacityRps } from "../../src/core/profiling/capacity.ts";
import { keepsUp } from "../../src/core/profiling/profile-point.ts";
import { isolatedLatencyMs } from "../../src/core/profiling/isolated-slo.ts";
import { probeRequests } from "../../src/core/profiling/probe-length.ts";

export interface ProbeOptions {
  /** Requests per probe run at the least (default 400; more for long requests, `probeRequests`). */
  requests?: number;
  /** Bisection steps on the rate (default 8). */
  steps?: number;
  seed: number;
}

/**
 * FREESH's profile point of one configuration, measured on the engine model the way FREESH
 * measured vLLM (§3.1): at the top clock, the highest Poisson rate that the instance keeps up with
 * while the mean TTFT and TBT stay within the type's SLOs (bisection from twice the rough
 * capacity); power, latency, TBT and TTFT are the means at that rate. No rate works, or no
 * request of the bin exists: max QPS 0 (the MILP's filter then drops the configuration).
 *
 * @example
 * probeConfig(llmSpecs["llama3-70b"], mode, binLengths(trace, { input: 184, output: 444 }, 2), { tbtMs: 150, ttftMs: 600 }, { seed: 1 });
 */
export function probeConfig(llm: LlmSpec, mode: ServingMode, lengths: readonly LengthPair[], slo: { tbtMs: number; ttftMs: number }, o: ProbeOptions): FreeshConfigPoint {
  const none = { maxQps: 0, powerW: 0, latencyS: 0, tbtMs: 0, ttftMs: 0 };
  if (lengths.length === 0 || llm.totalParams * llm.bytesPerParam >= mode.tp * mode.gpu.memoryGb * 1e9) return none;
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  const sizes = { input: mean(lengths.map((l) => l.inputTokens)), output: mean(lengths.map((l) => l.outputTokens)) };
  const top = { llm, gpu: mode.gpu, tp: mode.tp, mhz: mode.gpu.maxMhz };
  const lifetimeS = isolatedLatencyMs(top, sizes.input, sizes.output).e2eMs / 1e3;
  const run = (rate: number) => {
    const rng = seededRng(o.seed);
    const n = probeRequests(rate, lifetimeS, o.requests ?? 400);
    let t = 0;
    const requests = Array.from({ length: n }, () => {
      const { inputTokens, outputTokens } = lengths[randomIndex(rng, lengths.length)]!;
      return { arrivalS: (t += exponential(rng, rate)), inputTokens, outputTokens };
    });
    const out = simulateEngine({ llm, gpu: mode.gpu, tp: mode.tp, clock: mode.gpu.maxMhz }, requests);
    const kept = out.outcomes.slice(Math.floor(n / 10));
    const point = {
      maxQps: rate,
      powerW: out.energyJ / out.endS,
      latencyS: mean(kept.map((x) => x.e2eS)),
      tbtMs: mean(kept.map((x) => x.meanTbtS).filter(Number.isFinite)) * 1e3,
      ttftMs: mean(kept.map((x) => x.ttftS)) * 1e3,
    };
    const ok = out.rejected === 0 && keepsUp(out.outcomes) && point.ttftMs <= slo.ttftMs && point.tbtMs <= slo.tbtMs;
    return ok ? point : undefined;
  };
  let lo = 0;
  let hi = 2 * estimatedCapacityRps(top, sizes.input, sizes.output);
  let best: FreeshConfigPoint | undefined;
  for (let k = 0; k < (o.steps ?? 8); k++) {
    const mid = (lo + hi) / 2;
    const point = run(mid);
    if (point) [lo, best] = [mid, point];
    else hi = mid;
  }
  return best ?? none;
}

/**
 * The `[type][mode]` profile of one request population split by `thresholds` (or one type for
 * all when `thresholds` is undefined: a pool with no request classifier), on the engine model.
 */
export function probeProfile(llm: LlmSpec, modes: readonly ServingMode[], lengths: readonly LengthPair[], thresholds: { input: number; output: number } | undefined, slo: { tbtMs: readonly number[]; ttftMs: readonly number[] }, o: ProbeOptions): FreeshConfigPoint[][] {
  const types = thresholds ? [0, 1, 2, 3] : [0];
  return types.map((r) => {
    const bin = thresholds ? binLengths(lengths, thresholds, r) : [...lengths];
    return modes.map((mode, m) => probeConfig(llm, mode, bin, { tbtMs: slo.tbtMs[r]!, ttftMs: slo.ttftMs[r]! }, { ...o, seed: o.seed * 7919 + r * 31 + m }));
  });
}
