import type { LengthPair, RequestTrace } from "../../src/core/data/azure-trace.ts";
import { gpuSpecs, type GpuSpec } from "../../src/core/model/gpu-specs.ts";
import { llmSpecs, type LlmSpec } from "../../src/core/model/llm-specs.ts";
import { meetsSlo } from "../../src/core/planning/slo.ts";
import { classLengthsFromScheme, withinContext } from "../../src/core/profiling/class-lengths.ts";
import { isolatedLatencySlo } from "../../src/core/profiling/isolated-slo.ts";
import { PROBE_LIFETIMES } from "../../src/core/profiling/probe-length.ts";
import { defaultClocks, virtualProfile } from "../../src/core/profiling/virtual-profiler.ts";
import type { ClassId } from "../../src/core/schemas/ids.ts";
import type { ProfileRow } from "../../src/core/schemas/profile.ts";
import { ClassScheme, type Slo } from "../../src/core/schemas/request-class.ts";
import { classIds, classify, classShares } from "../../src/core/workload/class-scheme.ts";

/** DynamoLLM Table IV: input S < 256 <= M < 1024 <= L, output S < 100 <= M < 350 <= L (an edge value falls in the lower bin). */
export const DYNAMOLLM_SCHEME = ClassScheme.parse({ name: "dynamollm-table-iv", inputEdges: [255, 1023], outputEdges: [99, 349], inputLabels: ["S", "M", "L"], outputLabels: ["S", "M", "L"] });

export interface DynamoCluster {
  trace: RequestTrace;
  scheme: ClassScheme;
  classIds: ClassId[];
  shares: Record<ClassId, number>;
  gpu: GpuSpec;
  llm: LlmSpec;
  model: string;
  profile: ProfileRow[];
  slo: Record<ClassId, Slo>;
}

/**
 * DynamoLLM's evaluation setup (§V-A): Llama2-70B on DGX H100 servers, the 9 classes of Table IV
 * with the trace's own lengths (each profile point draws its requests from the trace's requests of
 * its class), a virtual profile over TP 2/4/8 and seven clocks from 800 MHz to
 * 1980 MHz (400 requests a point, as FREESH's probes: a p99 over 100 less the warm-up is about
 * their largest, so the highest load within an SLO is read from a lucky draw as often as not;
 * and at least 20 request lifetimes), and TTFT/TBT SLOs of 5x a class's latency alone at TP8 and
 * the top clock (§II).
 */
export function dynamoCluster(given: RequestTrace, o: { quick: boolean; seed: number }): DynamoCluster {
  const llm = llmSpecs["llama2-70b"];
  const gpu = gpuSpecs["H100-80GB"];
  // Llama2-70B's context is 4096 tokens: a longer request is served with its prompt cut to fit, so
  // the requests served and the lengths profiled are the same (8% of the conversation trace is longer).
  const trace = { ...given, requests: given.requests.map((r) => withinContext(r, llm.maxContext)) };
  const classes = classLengthsFromScheme(DYNAMOLLM_SCHEME, trace.requests);
  const observed: Record<string, LengthPair[]> = {};
  for (const r of trace.requests) (observed[classify(DYNAMOLLM_SCHEME, r.inputTokens, r.outputTokens)] ??= []).push(r);
  const profile = virtualProfile(
    o.quick
      ? { llm, gpu, tps: [4, 8], clocksMhz: defaultClocks(gpu, 3), classes, observed, loadFractions: [0.05, 0.2, 0.5], requestsPerPoint: 30, seed: o.seed }
      : { llm, gpu, tps: [2, 4, 8], clocksMhz: defaultClocks(gpu), classes, observed, loadFractions: [0.05, 0.1, 0.2, 0.3, 0.4, 0.5], requestsPerPoint: 400, lifetimes: PROBE_LIFETIMES, seed: o.seed },
  ).rows;
  const slo = Object.fromEntries(
    classes.map((c) => {
      const { ttftMs, tbtMs } = isolatedLatencySlo(llm, gpu, c, 5);
      return [c.classId, { ttftMs, tbtMs }];
    }),
  ) as Record<ClassId, Slo>;
  return { trace, scheme: DYNAMOLLM_SCHEME, classIds: classIds(DYNAMOLLM_SCHEME), shares: classShares(DYNAMOLLM_SCHEME, trace.requests), gpu, llm, model: llm.id, profile, slo };
}

/**
 * Req/s one SinglePool server (one TP8 instance at the top clock) serves at the trace's class mix
 * within the SLO: each class at its highest SLO-meeting profiled load, weighted by its share.
 */
export function singlePoolRpsPerNode(c: DynamoCluster): number {
  const secondsPerRequest = c.classIds.reduce((s, id) => {
    const share = c.shares[id] ?? 0;
    if (share <= 0) return s;
    const usable = c.profile.filter((r) => r.classId === id && r.tp === 8 && r.mhz === c.gpu.maxMhz && meetsSlo(r, c.slo[id]!));
    return s + share / Math.max(1e-9, ...usable.map((r) => r.loadRps));
  }, 0);
  return 1 / secondsPerRequest;
}
