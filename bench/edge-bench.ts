import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { Miniflare } from "miniflare";
import { loadAzureTrace } from "../host-agent/data/read-data-file.ts";
import { promptsOf, runDecisionBench, seededRng, syntheticTokens, type DecisionBench, type Percentiles } from "./edge/decision.ts";
import { measureThroughput, type ThroughputResult } from "./edge/throughput.ts";
import { startUpstream, type Upstream } from "./edge/upstream.ts";
import { buildWorker } from "./edge/worker-build.ts";

export interface EdgeBenchResult {
  route_decision_us: Percentiles;
  worker_throughput_ratio: number;
  bundle_kib: number;
  details: {
    decision: Omit<DecisionBench, "total">;
    throughput: {
      concurrency: number;
      rounds: number;
      /** worker_throughput_ratio is the median of these, one per round (both Workers back to back). */
      round_ratios: number[];
      /** All routing requests / all pass-through requests per second, rounds pooled. */
      pooled_ratio: number;
      routing_rps: number;
      pass_through_rps: number;
      /** CPU of each Worker's workerd process per request (null without /proc): steadier than rps on a busy machine. */
      routing_cpu_us_per_request: number | null;
      pass_through_cpu_us_per_request: number | null;
      requests_each: number;
      failures: number;
      first_failure?: string;
      load_avg_1m: number;
    };
    bundle: { bytes: number; gzip_bytes: number };
  };
}

export interface EdgeBenchOptions {
  requests: number;
  concurrency: number;
  warmup: number;
  rounds: number;
  /** Hard limit for building, starting and driving the Workers. */
  limitMs: number;
}

const DEFAULTS: EdgeBenchOptions = { requests: 4_000, concurrency: 16, warmup: 500, rounds: 8, limitMs: 240_000 };
const ROOT = fileURLToPath(new URL("..", import.meta.url));

/**
 * The edge benchmark: (a) the per-request decision in process (token estimate + classify +
 * select on a 64-site x 9-class plan; prompt lengths from the Azure conversation trace when
 * `dataDir` has it); (b) requests per second through the routing Worker over a pass-through
 * Worker, both in local workerd (Miniflare) against one local upstream, as the median of
 * per-round ratios (see measureThroughput), with each Worker's CPU per request; (c) the gzipped bundle
 * of `wrangler deploy --dry-run`. Bounded by `limitMs`; every process and file it starts or
 * writes is gone when it returns or throws.
 */
export async function runEdgeBench(dataDir: string, options: Partial<EdgeBenchOptions> = {}): Promise<EdgeBenchResult> {
  const o = { ...DEFAULTS, ...options };
  const decision = runDecisionBench(...(await benchPrompts(dataDir)), () => process.hrtime.bigint());

  const dir = mkdtempSync(join(tmpdir(), "greenference-edge-bench-"));
  const started: Miniflare[] = [];
  let upstream: Upstream | null = null;
  let timer: NodeJS.Timeout | undefined;
  try {
    const build = buildWorker(ROOT, dir);
    upstream = await startUpstream();
    const limit = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`edge bench: the Workers did not finish within ${o.limitMs / 1000} s`)), o.limitMs);
    });
    const throughput: ThroughputResult = await Promise.race([measureThroughput(build.main, upstream.url, { ...o, now: () => performance.now() }, (mf) => started.push(mf)), limit]);
    const firstFailure = throughput.routing.firstFailure ?? throughput.passThrough.firstFailure;
    return {
      route_decision_us: decision.total,
      worker_throughput_ratio: round(throughput.ratio),
      bundle_kib: round(build.gzipBytes / 1024),
      details: {
        decision: { parts: decision.parts, decisions: decision.decisions, prompts: decision.prompts },
        throughput: {
          concurrency: o.concurrency,
          rounds: o.rounds,
          round_ratios: throughput.roundRatios.map(round),
          pooled_ratio: round(throughput.pooledRatio),
          routing_rps: round(throughput.routing.rps),
          pass_through_rps: round(throughput.passThrough.rps),
          routing_cpu_us_per_request: nullableRound(throughput.routing.cpuUsPerRequest),
          pass_through_cpu_us_per_request: nullableRound(throughput.passThrough.cpuUsPerRequest),
          requests_each: throughput.routing.requests,
          failures: throughput.routing.failures + throughput.passThrough.failures,
          ...(firstFailure ? { first_failure: firstFailure } : {}),
          // Other work on the machine skews the ratio; this says how busy it was.
          load_avg_1m: round(loadavg()[0]!),
        },
        bundle: { bytes: build.bytes, gzip_bytes: build.gzipBytes },
      },
    };
  } finally {
    clearTimeout(timer);
    await Promise.allSettled(started.map((mf) => mf.dispose()));
    await upstream?.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** 2048 prompts: input lengths sampled from the Azure conversation trace, or synthetic without it. */
async function benchPrompts(dataDir: string): Promise<[ReturnType<typeof promptsOf>, string]> {
  const rng = seededRng(1);
  const path = resolve(dataDir, "azure-llm-2023/AzureLLMInferenceTrace_conv.csv");
  if (!existsSync(path)) return [promptsOf(syntheticTokens(2048, rng), rng), "synthetic: 10..1000 tokens, uniform"];
  const trace = await loadAzureTrace(path);
  const tokens = Array.from({ length: 2048 }, () => trace.requests[Math.floor(rng.next() * trace.requests.length)]!.inputTokens);
  return [promptsOf(tokens, rng), "azure-llm-2023 conversation trace (ContextTokens)"];
}

function round(x: number): number {
  return Math.round(x * 1000) / 1000;
}

function nullableRound(x: number | null): number | null {
  return x === null ? null : Math.round(x);
}
