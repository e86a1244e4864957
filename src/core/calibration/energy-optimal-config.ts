import { forkRng, seededRng } from "../ports/rng.ts";
import type { GpuSpec } from "../model/gpu-specs.ts";
import type { LlmSpec } from "../model/llm-specs.ts";
import { decodeTime, prefillTime } from "../model/iteration-time.ts";
import { meanLengths, sampleLengths, type ClassLengths } from "../profiling/class-lengths.ts";
import { profilePoint } from "../profiling/profile-point.ts";
import { poissonRequests } from "../profiling/steady-load.ts";

export interface ConfigEvaluation {
  tp: number;
  mhz: number;
  meetsSlo: boolean;
  energyPerRequestJ: number;
  ttftP99Ms: number;
  tbtP99Ms: number;
}

export interface EnergyOptimalSearch {
  llm: LlmSpec;
  gpu: GpuSpec;
  cls: ClassLengths;
  /** Offered load in tokens per second (input + output), as in DynamoLLM's "2000 TPS". */
  tokensPerSecond: number;
  tps: readonly number[];
  clocksMhz: readonly number[];
  /** TBT SLO = this multiple of an isolated request's TBT on TP8 at max clock (DynamoLLM §III: 5x). */
  sloMultiple: number;
  /** TTFT SLO in ms; defaults to the same multiple of the isolated TP8 max-clock TTFT. */
  ttftSloMs?: number;
  requests: number;
  seed: number;
}

/**
 * DynamoLLM's per-class experiment on the model: one instance of each (TP, clock) serves the class
 * at the given token rate; among the configurations whose p99 TTFT and TBT meet the SLO, the one
 * with the least energy per request wins.
 */
export function energyOptimalConfig(s: EnergyOptimalSearch): { best?: ConfigEvaluation; evaluations: ConfigEvaluation[] } {
  const mean = meanLengths(s.cls);
  const reference = { llm: s.llm, gpu: s.gpu, tp: 8, mhz: s.gpu.maxMhz };
  const ttftSloMs = s.ttftSloMs ?? s.sloMultiple * prefillTime(reference, [Math.round(mean.inputTokens)]).ms;
  const tbtSloMs = s.sloMultiple * decodeTime(reference, 1, mean.inputTokens + mean.outputTokens / 2).ms;
  const rateRps = s.tokensPerSecond / (mean.inputTokens + mean.outputTokens);
  const evaluations: ConfigEvaluation[] = [];
  for (const tp of s.tps) {
    for (const mhz of s.clocksMhz) {
      // The same arrivals for every configuration: a paired comparison.
      const requests = poissonRequests(forkRng(seededRng(s.seed), 1), rateRps, s.requests, (r) => sampleLengths(r, s.cls, s.llm.maxContext));
      const m = profilePoint({ llm: s.llm, gpu: s.gpu, tp, clock: mhz }, requests);
      const meetsSlo = m.stable && m.ttftMs.p99 <= ttftSloMs && m.tbtMs.p99 <= tbtSloMs;
      evaluations.push({ tp, mhz, meetsSlo, energyPerRequestJ: m.energyPerRequestJ, ttftP99Ms: m.ttftMs.p99, tbtP99Ms: m.tbtMs.p99 });
    }
  }
  const best = evaluations.filter((e) => e.meetsSlo).sort((a, b) => a.energyPerRequestJ - b.energyPerRequestJ)[0];
  return best ? { best, evaluations } : { evaluations };
}
