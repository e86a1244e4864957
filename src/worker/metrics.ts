import type { ControlDO } from "../../durable-objects/control-do.ts";
import { boundsAtOrAbove, HISTOGRAM_BOUNDS, leLabel } from "../core/stats/histogram.ts";

/** The edge's counters and what they count. */
export const METRICS = {
  greenference_requests_total: "Inference requests answered, by site (empty before routing), class and HTTP status.",
  greenference_route_decisions_total: "Routing decisions, by request class, the pool that took it, site and outcome (own, overflow, queued, starting, failover).",
  greenference_route_failures_total: "Requests no site could take, by class.",
  greenference_retries_total: "Requests retried at the next choice after a site failed before the first byte, by the failed site.",
  greenference_broken_responses_total: "Answers a site failed after its head (broke, went idle or ended its stream with an error event), by site; the client got an error event or a 502 saying why.",
  greenference_energy_joules_total: "Energy of answered requests per the receipts, by site.",
  greenference_carbon_grams_total: "gCO2e of answered requests per the receipts, by site.",
  greenference_answers_total: "Answered requests whose receipt was settled, by class: the count the token counters are per.",
  greenference_prompt_tokens_total: "Prompt tokens of answered requests, by class.",
  greenference_generation_tokens_total: "Generated tokens of answered requests, by class.",
  greenference_baseline_carbon_grams_total: "gCO2e the same energy would have emitted under carbon-blind capacity-share routing (the dashboard's baseline); ControlDO adds it as counters arrive.",
} as const;
export type MetricName = keyof typeof METRICS;

/**
 * The edge's histograms, per site: what it took to answer as the edge saw it, and each receipt's
 * energy. Named as vLLM names its request histograms, in seconds and joules. Each is kept as
 * counters (`_bucket{le}`, `_sum`, `_count`) so isolates' deltas add up in ControlDO.
 */
export const HISTOGRAMS = {
  greenference_time_to_first_byte_seconds: { help: "Edge arrival to the site's response head, by site (streams: before the first token).", bounds: HISTOGRAM_BOUNDS.ttftSeconds },
  greenference_e2e_request_latency_seconds: { help: "Edge arrival to the answer's end, by site.", bounds: HISTOGRAM_BOUNDS.e2eSeconds },
  greenference_request_energy_joules: { help: "Energy of each answered request per its receipt (measured, site-reported or estimated), by site.", bounds: HISTOGRAM_BOUNDS.energyJoules },
} as const satisfies Record<string, { help: string; bounds: readonly number[] }>;
export type HistogramName = keyof typeof HISTOGRAMS;
type HistogramSeriesName = `${HistogramName}_${"bucket" | "sum" | "count"}`;

/**
 * Counters of one isolate. Increments stay local and are flushed to ControlDO at most every
 * `flushIntervalMs` (in the background of a request), and before /metrics is rendered, so a
 * request costs no Durable Object round trip. Deltas of an isolate that is evicted before its
 * next flush are lost.
 */
export class EdgeMetrics {
  private pending = new Map<string, number>();
  private lastFlushMs = 0;
  /** Series keys by metric name, then label name and value in turn (as many as series counted). */
  private readonly keys = new Map<string, KeyNode>();

  constructor(
    private readonly now: () => number,
    private readonly flushIntervalMs = 5_000,
  ) {}

  count(name: MetricName | HistogramSeriesName, labels: Record<string, string | number>, by = 1): void {
    if (!(by > 0)) return;
    const key = this.seriesKey(name, labels);
    this.pending.set(key, (this.pending.get(key) ?? 0) + by);
  }

  /** One observation of a histogram: its cumulative buckets, sum and count, as counter deltas. */
  observe(name: HistogramName, labels: Record<string, string>, value: number): void {
    if (!Number.isFinite(value) || value < 0) return;
    for (const bound of boundsAtOrAbove(HISTOGRAMS[name].bounds, value)) this.count(`${name}_bucket`, { ...labels, le: leLabel(bound) });
    this.count(`${name}_sum`, labels, value);
    this.count(`${name}_count`, labels);
  }

  /** `series(name, labels)`, built once per series: a request counts several, and the same ones again and again. */
  private seriesKey(name: string, labels: Record<string, string | number>): string {
    let node = this.keys.get(name);
    if (!node) this.keys.set(name, (node = {}));
    for (const k in labels) node = child(child(node, k), labels[k]!);
    return (node.key ??= series(name, labels));
  }

  /** Flushes in the background of `ctx` if the interval has passed; `control` is only called then. */
  flushInBackground(ctx: ExecutionContext, control: () => DurableObjectStub<ControlDO>): void {
    if (this.pending.size === 0 || this.now() - this.lastFlushMs < this.flushIntervalMs) return;
    ctx.waitUntil(this.flush(control()));
  }

  /** Sends the pending deltas; on failure they are kept for the next flush. */
  async flush(control: DurableObjectStub<ControlDO>): Promise<void> {
    if (this.pending.size === 0) return;
    const deltas = Object.fromEntries(this.pending);
    this.pending = new Map();
    this.lastFlushMs = this.now();
    try {
      await control.addMetrics(deltas);
    } catch (error) {
      for (const [key, v] of Object.entries(deltas)) this.pending.set(key, (this.pending.get(key) ?? 0) + v);
      console.error("could not flush edge metrics", error);
    }
  }
}

interface KeyNode {
  key?: string;
  next?: Map<string | number, KeyNode>;
}

function child(node: KeyNode, part: string | number): KeyNode {
  node.next ??= new Map();
  let next = node.next.get(part);
  if (!next) node.next.set(part, (next = {}));
  return next;
}

const NEEDS_ESCAPE = /[\\"\n]/;

/**
 * The Prometheus series key: `name{a="x",b="y"}`. It is built for every counted event (several per
 * request), so values are escaped only when they hold a character that needs it.
 *
 * @example
 * series("greenference_retries_total", { site: "eu-a" }); // 'greenference_retries_total{site="eu-a"}'
 */
export function series(name: string, labels: Record<string, string | number>): string {
  let parts = "";
  for (const k in labels) {
    const v = String(labels[k]);
    parts += `${parts ? "," : ""}${k}="${NEEDS_ESCAPE.test(v) ? v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n") : v}"`;
  }
  return parts ? `${name}{${parts}}` : name;
}

/**
 * Prometheus text exposition (format 0.0.4) of counter totals keyed by series; every known
 * counter and histogram gets its HELP and TYPE lines even before it has a sample. A histogram's
 * series gets every bucket (a bucket nothing fell under was never counted: 0), in `le` order,
 * then its sum and count.
 */
export function renderPrometheus(totals: Record<string, number>): string {
  const byName = new Map<string, string[]>();
  for (const name of Object.keys(METRICS)) byName.set(name, []);
  const histograms = new Map<string, Map<string, Map<string, number>>>(Object.keys(HISTOGRAMS).map((n) => [n, new Map()]));
  for (const [key, value] of Object.entries(totals).sort(([a], [b]) => a.localeCompare(b))) {
    const name = key.split("{")[0]!;
    const part = /^(.*)_(bucket|sum|count)$/.exec(name);
    const histogram = part ? histograms.get(part[1]!) : undefined;
    if (part && histogram) {
      const { labels, le } = withoutLe(key.slice(name.length));
      const series = histogram.get(labels) ?? new Map<string, number>();
      histogram.set(labels, series.set(part[2] === "bucket" ? le! : part[2]!, value));
      continue;
    }
    if (!byName.has(name)) byName.set(name, []);
    byName.get(name)!.push(`${key} ${value}`);
  }
  const lines: string[] = [];
  for (const [name, samples] of byName) {
    const help = (METRICS as Record<string, string>)[name];
    if (help) lines.push(`# HELP ${name} ${help}`);
    lines.push(`# TYPE ${name} counter`, ...samples);
  }
  for (const [name, series] of histograms) {
    const { help, bounds } = HISTOGRAMS[name as HistogramName];
    lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} histogram`);
    for (const [labels, values] of series) {
      const withLe = (le: string) => (labels === "" ? `{le="${le}"}` : `${labels.slice(0, -1)},le="${le}"}`);
      for (const bound of [...bounds, Infinity]) lines.push(`${name}_bucket${withLe(leLabel(bound))} ${values.get(leLabel(bound)) ?? 0}`);
      lines.push(`${name}_sum${labels} ${values.get("sum") ?? 0}`, `${name}_count${labels} ${values.get("count") ?? 0}`);
    }
  }
  return lines.join("\n") + "\n";
}

/** `{site="a",le="0.5"}` -> labels `{site="a"}` and le "0.5" (le is always the last label `observe` writes). */
function withoutLe(labels: string): { labels: string; le: string | undefined } {
  const m = /(,?)le="([^"]*)"\}$/.exec(labels);
  if (!m) return { labels, le: undefined };
  const rest = labels.slice(0, m.index);
  return { labels: rest === "{" ? "" : `${rest}}`, le: m[2] };
}
