import { forkRng, seededRng } from "../ports/rng.ts";
import type { GpuSpec } from "../model/gpu-specs.ts";
import type { LlmSpec } from "../model/llm-specs.ts";
import { decodeTime, prefillTime } from "../model/iteration-time.ts";
import { simulateEngine, type EngineRequest } from "../engine/engine-simulator.ts";
import { meanLengths, sampleLengths, type ClassLengths } from "../profiling/class-lengths.ts";
import { keepsUp } from "../profiling/profile-point.ts";
import { poissonRequests } from "../profiling/steady-load.ts";
import { linearPercentile, sortedAscending } from "../stats/percentile.ts";

export interface ConfigEvaluation {
  tp: number;
  mhz: number;
  meetsSlo: boolean;
  energyPerRequestJ: number;
  /** p99 over requests of TTFT / the request's unloaded TTFT. */
  ttftSlowdownP99: number;
  /** p99 over requests of mean TBT / the request's unloaded TBT. */
  tbtSlowdownP99: number;
}

export interface EnergyOptimalSearch {
  llm: LlmSpec;
  gpu: GpuSpec;
  cls: ClassLengths;
  /** Offered load of the whole server in tokens per second (input + output), DynamoLLM's "2000 TPS". */
  tokensPerSecond: number;
  /** GPUs in the server: a TP-t configuration runs serverGpus / t instances that share the load. */
  serverGpus: number;
  tps: readonly number[];
  clocksMhz: readonly number[];
  /** SLO: p99 TTFT and TBT within this multiple of the request's unloaded latency (DynamoLLM §III: 5x). */
  sloMultiple: number;
  requests: number;
  seed: number;
}

/**
 * DynamoLLM's per-class experiment on the model: a server of `serverGpus` GPUs runs as many
 * instances of each (TP, clock) as fit (4 x TP2, 2 x TP4 or 1 x TP8 on a DGX H100) and they share
 * the class's load equally, so one instance is simulated at its share. A configuration meets the
 * SLO when it keeps up and the p99 of each request's TTFT and mean TBT, each over what that request
 * takes alone on TP8 at max clock, is within `sloMultiple`. Among those, the least energy per
 * request (the same for one instance as for the server) wins.
 */
export function energyOptimalConfig(s: EnergyOptimalSearch): { best?: ConfigEvaluation; evaluations: ConfigEvaluation[] } {
  const mean = meanLengths(s.cls);
  const reference = { llm: s.llm, gpu: s.gpu, tp: Math.max(...s.tps), mhz: s.gpu.maxMhz };
  const unloadedTtftS = (r: EngineRequest) => prefillTime(reference, [r.inputTokens]).ms / 1e3;
  const unloadedTbtS = (r: EngineRequest) => decodeTime(reference, 1, r.inputTokens + r.outputTokens / 2).ms / 1e3;
  const serverRps = s.tokensPerSecond / (mean.inputTokens + mean.outputTokens);
  // The same arrival stream (rescaled in time) for every configuration: a paired comparison.
  const base = poissonRequests(forkRng(seededRng(s.seed), 1), 1, s.requests, (r) => sampleLengths(r, s.cls, s.llm.maxContext));
  const evaluations: ConfigEvaluation[] = [];
  for (const tp of s.tps) {
    const rateRps = serverRps / Math.floor(s.serverGpus / tp);
    const requests = base.map((r) => ({ ...r, arrivalS: r.arrivalS / rateRps }));
    for (const mhz of s.clocksMhz) {
      const run = simulateEngine({ llm: s.llm, gpu: s.gpu, tp, clock: mhz }, requests);
      const skip = Math.floor(requests.length / 10);
      const ttft: number[] = [];
      const tbt: number[] = [];
      run.outcomes.forEach((o, i) => {
        if (i < skip) return;
        const r = requests[i]!;
        ttft.push(Number.isFinite(o.ttftS) ? o.ttftS / unloadedTtftS(r) : Infinity);
        if (r.outputTokens > 1) tbt.push(Number.isFinite(o.meanTbtS) ? o.meanTbtS / unloadedTbtS(r) : Infinity);
      });
      const p99 = (xs: number[]) => (xs.length === 0 ? 0 : linearPercentile(sortedAscending(xs), 99));
      const served = run.outcomes.filter((o) => Number.isFinite(o.e2eS)).length;
      const evaluation = {
        tp,
        mhz,
        energyPerRequestJ: served > 0 ? run.energyJ / served : Infinity,
        ttftSlowdownP99: p99(ttft),
        tbtSlowdownP99: p99(tbt),
      };
      const meetsSlo = run.rejected === 0 && keepsUp(run.outcomes) && evaluation.ttftSlowdownP99 <= s.sloMultiple && evaluation.tbtSlowdownP99 <= s.sloMultiple;
      evaluations.push({ ...evaluation, meetsSlo });
    }
  }
  const best = evaluations.filter((e) => e.meetsSlo).sort((a, b) => a.energyPerRequestJ - b.energyPerRequestJ)[0];
  return best ? { best, evaluations } : { evaluations };
}
