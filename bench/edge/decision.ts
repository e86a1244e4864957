import { classifyRequest } from "../../src/core/classify/classify-request.ts";
import { HistogramOutputPredictor } from "../../src/core/classify/output-predictor.ts";
import { estimateInputTokens, type PromptShape } from "../../src/core/classify/token-estimate.ts";
import { seededRng, type Rng } from "../../src/core/ports/rng.ts";
import { Router } from "../../src/core/routing/router.ts";
import { buildRoutingSnapshot } from "../../src/core/routing/routing-snapshot.ts";
import type { SiteStatus } from "../../src/core/routing/site-status.ts";
import { Fleet } from "../../src/core/schemas/fleet.ts";
import { Plan } from "../../src/core/schemas/plan.ts";
import { nearestRankPercentile } from "../../src/core/stats/percentile.ts";
import { BENCH_MODEL, benchFleet, benchPlan } from "./fleet-64.ts";

export interface Percentiles {
  p50: number;
  p99: number;
}

export interface DecisionBench {
  /** Estimate input tokens + classify + select, per request. */
  total: Percentiles;
  parts: { estimate_tokens: Percentiles; classify: Percentiles; select: Percentiles };
  decisions: number;
  prompts: { source: string; chars_p50: number; chars_p99: number };
}

/** What a decision is made on: a prompt as the body parser extracts it and the client's max_tokens. */
export interface BenchPrompt {
  shape: PromptShape;
  maxTokens: number;
}

const WORDS = ["carbon", "aware", "inference", "routing", "for", "the", "edge", "with", "wind", "power", "and", "forecasts"];

/**
 * Prompts of `tokens` input tokens each (about 4 bytes per token of English words), as flat
 * strings like a parsed JSON body holds; max_tokens 16..1024.
 */
export function promptsOf(tokens: readonly number[], rng: Rng): BenchPrompt[] {
  return tokens.map((n) => {
    const parts: string[] = [];
    let length = 0;
    while (length < 4 * n) {
      const w = WORDS[Math.floor(rng.next() * WORDS.length)]!;
      parts.push(w);
      length += w.length + 1;
    }
    // JSON round trip: a flat string, as the Worker gets it from JSON.parse (not a rope).
    const text = JSON.parse(JSON.stringify(parts.join(" "))) as string;
    return { shape: { texts: [text], messages: 1, images: 0, tokenIds: 0 }, maxTokens: 16 + Math.floor(rng.next() * 1008) };
  });
}

/**
 * Per-request time in microseconds of the edge's decision once the body is parsed: estimate
 * the prompt's input tokens, classify (output predictor, max_tokens hint), and select a site and
 * instance by smooth weighted round-robin over the class's 64 targets of a 64-site x 9-class plan
 * (every site healthy). Warmed up before timing; each part timed separately too.
 */
export function runDecisionBench(prompts: readonly BenchPrompt[], source: string, now: () => bigint, decisions = 100_000, warmup = 30_000): DecisionBench {
  const fleet = Fleet.parse(benchFleet((s) => `https://${s}.bench.test/`));
  const plan = Plan.parse(benchPlan(1));
  const statuses = new Map<string, SiteStatus>(fleet.sites.map((s) => [s.id, { site: s.id, healthy: true, lastSeenMs: 1_000, saturated: [], unavailable: [] }]));
  const snapshot = buildRoutingSnapshot({ generation: 1, fleetRevision: 1, fleet, plan, statuses, carbon: new Map() });
  const router = new Router(snapshot, { staleAfterMs: 1e12 });
  const predictor = new HistogramOutputPredictor();
  const regions = ["AMS", "EU"];
  const times = { total: new Float64Array(decisions), estimate: new Float64Array(decisions), classify: new Float64Array(decisions), select: new Float64Array(decisions) };
  let sink = 0;
  const decide = (i: number, record: boolean): void => {
    const p = prompts[i % prompts.length]!;
    const t0 = now();
    const inputTokens = estimateInputTokens(p.shape);
    const t1 = now();
    const cls = classifyRequest({ scheme: snapshot.scheme, inputTokens, maxTokens: p.maxTokens, key: "anonymous", model: BENCH_MODEL }, predictor);
    const t2 = now();
    if (!cls.ok) throw new Error(cls.message);
    const r = router.select({ classId: cls.value.classId, model: BENCH_MODEL, edgeRegions: regions, nowMs: 2_000 });
    const t3 = now();
    if (!r.ok) throw new Error(r.reason);
    sink += r.choice.instance.length;
    if (!record) return;
    times.estimate[i] = Number(t1 - t0) / 1000;
    times.classify[i] = Number(t2 - t1) / 1000;
    times.select[i] = Number(t3 - t2) / 1000;
    times.total[i] = Number(t3 - t0) / 1000;
  };
  for (let i = 0; i < warmup; i++) decide(i, false);
  for (let i = 0; i < decisions; i++) decide(i, true);
  if (sink === 0) throw new Error("no decisions made");
  const chars = prompts.map((p) => p.shape.texts[0]!.length).sort((a, b) => a - b);
  return {
    total: percentiles(times.total),
    parts: { estimate_tokens: percentiles(times.estimate), classify: percentiles(times.classify), select: percentiles(times.select) },
    decisions,
    prompts: { source, chars_p50: nearestRankPercentile(chars, 50), chars_p99: nearestRankPercentile(chars, 99) },
  };
}

/** Prompt lengths when no trace is at hand: uniform 10..1000 tokens, seeded. */
export function syntheticTokens(n: number, rng: Rng): number[] {
  return Array.from({ length: n }, () => 10 + Math.floor(rng.next() * 991));
}

export { seededRng };

function percentiles(us: Float64Array): Percentiles {
  const sorted = Array.from(us).sort((a, b) => a - b);
  return { p50: round(nearestRankPercentile(sorted, 50)), p99: round(nearestRankPercentile(sorted, 99)) };
}

function round(x: number): number {
  return Math.round(x * 100) / 100;
}
