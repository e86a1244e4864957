import type { LengthPair } from "../data/azure-trace.ts";
import type { FreeshProfiles } from "../data/freesh-profiles.ts";
import { simulateEngine, type EngineScheduling } from "../engine/engine-simulator.ts";
import type { LlmSpec } from "../model/llm-specs.ts";
import { binLengths, servingModes } from "../planning/freesh/serving-modes.ts";
import { forkRng, randomIndex, seededRng } from "../ports/rng.ts";
import { keepsUp } from "../profiling/profile-point.ts";
import { poissonRequests } from "../profiling/steady-load.ts";
import { median } from "../stats/percentile.ts";

/** One measured operating point of FREESH's profile and what the engine model does there. */
export interface MeasuredPoint {
  partition: string;
  type: string;
  mode: string;
  qps: number;
  /**
   * Fraction of the mode's dense peak FLOPs that the GEMMs alone need to serve `qps` requests of the
   * bin's mean length (2 x parameters per prompt or output token): above 1, no engine on these GPUs
   * serves that rate at the trace's lengths, so the measured requests must have been shorter.
   */
  gemmPeakShare: number;
  measured: { tbtMs: number; ttftMs: number; powerW: number };
  ours: { tbtMs: number; ttftMs: number; powerW: number; keepsUp: boolean };
}

/** Medians over one GPU kind's points of ours / measured. */
export interface MeasuredSummary {
  points: number;
  /** Points where the model keeps up with the measured max QPS at all. */
  keeps_up: number;
  /** Points whose rate at the trace's lengths needs more GEMM FLOPs than the GPUs' dense peak (see `gemmPeakShare`). */
  beyond_peak_flops: number;
  tbt_ratio_p50: number;
  ttft_ratio_p50: number;
  power_ratio_p50: number;
}

export interface FreeshMeasuredOptions {
  scheduling: EngineScheduling;
  /** Requests per point; the first tenth is warm-up and left out of the means. */
  requests: number;
  seed: number;
}

/**
 * The engine model at FREESH's measured operating points (profiles.json: Llama3-70B on vLLM, A100
 * x2/x4/x8 and H100 x4). At every (partition, type, mode) with a max QPS, the model serves
 * Poisson arrivals at that rate, with lengths drawn from the trace's requests in that bin, at the
 * top clock; its mean TBT, mean TTFT and mean power (all the mode's GPUs) are set against the
 * measured ones. This checks the model under load, where splitwise's rows (one batch at a time)
 * say nothing. Measured points are taken as transcribed, including a 2 ms TBT that is likely a typo.
 *
 * @example
 * freeshMeasuredPoints(llmSpecs["llama3-70b"], profiles, trace.requests, { scheduling: "prefill-first", requests: 400, seed: 7 });
 */
export function freeshMeasuredPoints(llm: LlmSpec, profiles: FreeshProfiles, lengths: readonly LengthPair[], o: FreeshMeasuredOptions): MeasuredPoint[] {
  const modes = servingModes(profiles);
  const points: MeasuredPoint[] = [];
  for (const [partition, p] of Object.entries(profiles.partitions)) {
    profiles.types.forEach((type, r) => {
      const bin = binLengths(lengths, p.thresholds_tokens, r);
      const meanTokens = mean(bin.map((l) => l.inputTokens + l.outputTokens));
      modes.forEach((mode, m) => {
        const qps = p.max_qps[r]![m]!;
        if (qps <= 0 || bin.length === 0) return;
        const rng = forkRng(seededRng(o.seed), points.length + 1);
        const requests = poissonRequests(rng, qps, o.requests, (x) => {
          const { inputTokens, outputTokens } = bin[randomIndex(x, bin.length)]!;
          return { inputTokens, outputTokens };
        });
        const run = simulateEngine({ llm, gpu: mode.gpu, tp: mode.tp, clock: mode.gpu.maxMhz, scheduling: o.scheduling }, requests);
        const kept = run.outcomes.slice(Math.floor(o.requests / 10));
        points.push({
          partition,
          type,
          mode: mode.name,
          qps,
          gemmPeakShare: (2 * llm.totalParams * qps * meanTokens) / (mode.tp * mode.gpu.peakTflops * 1e12),
          measured: { tbtMs: p.tbt_ms[r]![m]!, ttftMs: p.ttft_ms[r]![m]!, powerW: p.power_w[r]![m]! },
          ours: {
            tbtMs: mean(kept.map((x) => x.meanTbtS).filter(Number.isFinite)) * 1e3,
            ttftMs: mean(kept.map((x) => x.ttftS)) * 1e3,
            powerW: run.energyJ / run.endS,
            keepsUp: run.rejected === 0 && keepsUp(run.outcomes),
          },
        });
      });
    });
  }
  return points;
}

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);

/** The GPU kind of a mode name: "H100" for "H100x4". */
const kindOf = (mode: string) => mode.replace(/x\d+$/, "");

/** Summary per GPU kind (by the mode's name prefix, e.g. "H100" for "H100x4"). */
export function summariseMeasured(points: readonly MeasuredPoint[]): Record<string, MeasuredSummary> {
  const kinds = [...new Set(points.map((p) => kindOf(p.mode)))];
  return Object.fromEntries(
    kinds.map((kind) => {
      const of = points.filter((p) => kindOf(p.mode) === kind);
      const ratio = (k: "tbtMs" | "ttftMs" | "powerW") => median(of.map((p) => p.ours[k] / p.measured[k]));
      return [kind.toLowerCase(), { points: of.length, keeps_up: of.filter((p) => p.ours.keepsUp).length, beyond_peak_flops: of.filter((p) => p.gemmPeakShare > 1).length, tbt_ratio_p50: ratio("tbtMs"), ttft_ratio_p50: ratio("ttftMs"), power_ratio_p50: ratio("powerW") }];
    }),
  );
}
