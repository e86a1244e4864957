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

/**
 * How a (TP, clock) configuration is deployed for the experiment.
 * - `one-instance`: one TP-t instance takes the whole load and the energy is that of its t GPUs.
 *   This is DynamoLLM §III's characterisation (Tables I-III): "TP8 requires more GPUs ... and, thus,
 *   consumes more energy. TP2 uses fewer GPUs but increases the execution time", "under high load,
 *   the system cannot operate on TP2"; Heron §5.1, from the same group, states it outright: "the GPU
 *   instance (e.g. TP8 needs 8) caters to a Poisson arrival of requests with load l".
 * - `fill-server`: a server of `gpus` GPUs runs gpus / t instances that share the load equally
 *   (4 x TP2, 2 x TP4 or 1 x TP8 on a DGX H100), so every configuration uses the whole server.
 */
export type InstanceLayout = { kind: "one-instance" } | { kind: "fill-server"; gpus: number };

export interface EnergyOptimalSearch {
  llm: LlmSpec;
  gpu: GpuSpec;
  cls: ClassLengths;
  /** Offered load in tokens per second (input + output), DynamoLLM's "2000 TPS". */
  tokensPerSecond: number;
  /** Who serves that load: see `InstanceLayout`. */
  layout: InstanceLayout;
  tps: readonly number[];
  clocksMhz: readonly number[];
  /** SLO: p99 TTFT and TBT within this multiple of the request's unloaded latency (DynamoLLM §III: 5x). */
  sloMultiple: number;
  /** TP of the unloaded reference, run at max clock (Heron §5.1: "in isolation at TP8 and 2 GHz"). */
  referenceTp: number;
  requests: number;
  seed: number;
}

/**
 * DynamoLLM's per-class experiment on the model: each (TP, clock) serves the class's load as
 * `layout` says (one instance is simulated at its share of the load). A configuration meets the
 * SLO when it keeps up and the p99 of each request's TTFT and mean TBT, each over what that request
 * takes alone on `referenceTp` at max clock, is within `sloMultiple`. Among those, the least energy per
 * request (the same for one instance as for a server of identical instances) wins.
 *
 * @example
 * energyOptimalConfig({ llm, gpu, cls, tokensPerSecond: 2000, layout: { kind: "one-instance" }, tps: [2, 4, 8], clocksMhz: [1200, 1980], sloMultiple: 5, referenceTp: 8, requests: 300, seed: 7 }).best
 */
export function energyOptimalConfig(s: EnergyOptimalSearch): { best?: ConfigEvaluation; evaluations: ConfigEvaluation[] } {
  const mean = meanLengths(s.cls);
  const reference = { llm: s.llm, gpu: s.gpu, tp: s.referenceTp, mhz: s.gpu.maxMhz };
  const unloadedTtftS = (r: EngineRequest) => prefillTime(reference, [r.inputTokens]).ms / 1e3;
  const unloadedTbtS = (r: EngineRequest) => decodeTime(reference, 1, r.inputTokens + r.outputTokens / 2).ms / 1e3;
  const offeredRps = s.tokensPerSecond / (mean.inputTokens + mean.outputTokens);
  // The same arrival stream (rescaled in time) for every configuration: a paired comparison.
  const base = poissonRequests(forkRng(seededRng(s.seed), 1), 1, s.requests, (r) => sampleLengths(r, s.cls, s.llm.maxContext));
  const evaluations: ConfigEvaluation[] = [];
  for (const tp of s.tps) {
    const rateRps = s.layout.kind === "one-instance" ? offeredRps : offeredRps / Math.floor(s.layout.gpus / tp);
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
