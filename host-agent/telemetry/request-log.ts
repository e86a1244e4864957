import { Histogram, HISTOGRAM_BOUNDS } from "../../src/core/stats/histogram.ts";
import { nearestRankPercentile, sortedAscending } from "../../src/core/stats/percentile.ts";
import { ClassId } from "../../src/core/schemas/ids.ts";
import type { LatencySummary } from "../../src/core/schemas/profile.ts";
import type { Slo } from "../../src/core/schemas/request-class.ts";
import { MAX_COUNTED_CLASSES, type SloCount } from "../../src/core/schemas/telemetry.ts";
import { meetsSlo } from "../../src/core/slo/meets-slo.ts";

/** One finished request as an engine (or the site gateway) saw it; times on the site clock. */
export interface ServedRequest {
  instanceId: string;
  /** The request class the edge gave it (`x-greenference-class`), when valid. */
  classId: string | undefined;
  endMs: number;
  /** Undefined when unknown: an answer the engine sent whole (not streamed) shows no first token. */
  ttftMs: number | undefined;
  /** Mean gap between output tokens; undefined for one-token outputs and unstreamed answers. */
  tbtMs: number | undefined;
  /** From arrival to the answer's end. */
  e2eMs: number;
  /** Energy charged to the request, when its engine gives a receipt (vLLM and SGLang do not). */
  energyJ: number | undefined;
  promptTokens: number;
  completionTokens: number;
  /** Its class's SLO as the edge sent it (`x-greenference-slo`); without one the request is not judged. */
  slo?: Slo | undefined;
}

/** What an instance served over a window. */
export interface ServedSummary {
  requests: number;
  servedRps: Record<string, number>;
  ttftMs: LatencySummary | undefined;
  tbtMs: LatencySummary | undefined;
}

/** Running totals per instance since the agent started, for Prometheus counters. */
export interface ServedTotals {
  requests: number;
  /** Energy of the requests that came with a receipt. */
  energyJ: number;
  promptTokens: number;
  completionTokens: number;
}

/** Per instance since the agent started: request latencies (s) and receipt energy (J) as histograms. */
export interface RequestHistograms {
  ttftSeconds: Histogram;
  /** Each request's mean time per output token after the first (vLLM's `time_per_output_token`). */
  tpotSeconds: Histogram;
  e2eSeconds: Histogram;
  /** Requests with a receipt only. */
  energyJoules: Histogram;
}

const newHistograms = (): RequestHistograms => ({
  ttftSeconds: new Histogram(HISTOGRAM_BOUNDS.ttftSeconds),
  tpotSeconds: new Histogram(HISTOGRAM_BOUNDS.tpotSeconds),
  e2eSeconds: new Histogram(HISTOGRAM_BOUNDS.e2eSeconds),
  energyJoules: new Histogram(HISTOGRAM_BOUNDS.energyJoules),
});

/** The class id in a header value, or undefined when absent or malformed. */
export const classIdOf = (header: string | string[] | undefined): string | undefined => {
  const value = Array.isArray(header) ? header[0] : header;
  return value !== undefined && ClassId.safeParse(value).success ? value : undefined;
};

/**
 * Recently finished requests, kept for `retentionMs` (and at most `maxEntries`), for telemetry's
 * per-class served load and TTFT/TBT percentiles, plus running totals per instance and running
 * SLO counts per class (each request judged against the SLO it came with).
 *
 * @example
 * log.record({ instanceId: "i1", classId: "SS", endMs: now, ttftMs: 80, tbtMs: 30, e2eMs: 650, energyJ: 41, promptTokens: 100, completionTokens: 20 });
 * log.summary("i1", now - 10_000, now).servedRps; // { SS: 0.1 }
 */
export class RequestLog {
  private entries: ServedRequest[] = [];
  private head = 0;
  private readonly totalsByInstance = new Map<string, ServedTotals>();
  private readonly sloByClass = new Map<string, SloCount>();
  private readonly histogramsByInstance = new Map<string, RequestHistograms>();

  constructor(
    private readonly retentionMs = 120_000,
    private readonly maxEntries = 50_000,
  ) {}

  record(entry: ServedRequest): void {
    this.entries.push(entry);
    const t = this.totalsByInstance.get(entry.instanceId) ?? { requests: 0, energyJ: 0, promptTokens: 0, completionTokens: 0 };
    t.requests++;
    t.energyJ += entry.energyJ ?? 0;
    t.promptTokens += entry.promptTokens;
    t.completionTokens += entry.completionTokens;
    this.totalsByInstance.set(entry.instanceId, t);
    let h = this.histogramsByInstance.get(entry.instanceId);
    if (!h) this.histogramsByInstance.set(entry.instanceId, (h = newHistograms()));
    if (entry.ttftMs !== undefined) h.ttftSeconds.observe(entry.ttftMs / 1e3);
    if (entry.tbtMs !== undefined) h.tpotSeconds.observe(entry.tbtMs / 1e3);
    h.e2eSeconds.observe(entry.e2eMs / 1e3);
    if (entry.energyJ !== undefined) h.energyJoules.observe(entry.energyJ);
    this.countSlo(entry);
    this.prune(entry.endMs);
  }

  /** Requests judged against their class's SLO and those that met it, per class, since the log began. */
  sloCounts(): Record<string, SloCount> {
    return Object.fromEntries([...this.sloByClass].map(([c, n]) => [c, { ...n }]));
  }

  private countSlo(entry: ServedRequest): void {
    if (entry.classId === undefined || !entry.slo) return;
    const met = meetsSlo(entry, entry.slo);
    if (met === undefined) return;
    let count = this.sloByClass.get(entry.classId);
    if (!count) {
      if (this.sloByClass.size >= MAX_COUNTED_CLASSES) return;
      this.sloByClass.set(entry.classId, (count = { judged: 0, met: 0 }));
    }
    count.judged++;
    if (met) count.met++;
  }

  /** Latency and energy histograms of finished requests, per instance. */
  histograms(): ReadonlyMap<string, RequestHistograms> {
    return this.histogramsByInstance;
  }

  totals(): ReadonlyMap<string, ServedTotals> {
    return this.totalsByInstance;
  }

  /** Requests of `instanceId` (every instance's when undefined) that finished in (sinceMs, nowMs], oldest first. */
  finished(instanceId: string | undefined, sinceMs: number, nowMs: number): ServedRequest[] {
    this.prune(nowMs);
    const out: ServedRequest[] = [];
    for (let i = this.head; i < this.entries.length; i++) {
      const e = this.entries[i]!;
      if ((instanceId === undefined || e.instanceId === instanceId) && e.endMs > sinceMs && e.endMs <= nowMs) out.push(e);
    }
    return out;
  }

  /** Requests of `instanceId` that finished in (sinceMs, nowMs]: per-class rates and latency percentiles. */
  summary(instanceId: string, sinceMs: number, nowMs: number): ServedSummary {
    const windowS = Math.max(1e-3, (nowMs - sinceMs) / 1e3);
    const finished = this.finished(instanceId, sinceMs, nowMs);
    // A Map: a class id is a key, and no key may read an object's prototype (see ClassId).
    const counts = new Map<string, number>();
    for (const e of finished) if (e.classId !== undefined) counts.set(e.classId, (counts.get(e.classId) ?? 0) + 1);
    const servedRps = Object.fromEntries([...counts].map(([c, n]) => [c, n / windowS]));
    const ttft = finished.flatMap((e) => (e.ttftMs === undefined ? [] : [e.ttftMs]));
    const tbt = finished.flatMap((e) => (e.tbtMs !== undefined && Number.isFinite(e.tbtMs) ? [e.tbtMs] : []));
    return { requests: finished.length, servedRps, ttftMs: summarise(ttft), tbtMs: summarise(tbt) };
  }

  private prune(nowMs: number): void {
    while (this.head < this.entries.length && (this.entries.length - this.head > this.maxEntries || this.entries[this.head]!.endMs < nowMs - this.retentionMs)) this.head++;
    if (this.head > 1024 && this.head * 2 > this.entries.length) {
      this.entries = this.entries.slice(this.head);
      this.head = 0;
    }
  }
}

function summarise(values: number[]): LatencySummary | undefined {
  if (values.length === 0) return undefined;
  const sorted = sortedAscending(values);
  return { p50: nearestRankPercentile(sorted, 50), p99: nearestRankPercentile(sorted, 99) };
}
