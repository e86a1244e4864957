import type { Forecast } from "../schemas/forecast.ts";
import type { TokenCounts } from "./request-shape.ts";
import { valuesOver } from "./series-value.ts";

/** Requests per class counted so far, at a time: what the planner cron keeps between runs. */
export interface DemandSample {
  atMs: number;
  counts: Record<string, number>;
  /** Tokens of the answered requests per class (`classTokenCounts`), for the classes' mean requests. */
  tokens?: Record<string, TokenCounts>;
}

/** Counters whose `class` label counts a request of that class: routed ones and ones no site could take. */
const DEMAND_COUNTERS = ["greenference_route_decisions_total", "greenference_route_failures_total"];
const CLASS_LABEL = /[{,]class="((?:[^"\\]|\\.)*)"/;

/** A counter series key's metric name and `class` label (`name{class="SS",...}`). */
export function seriesClass(key: string): { name: string; classId: string | undefined } {
  return { name: key.slice(0, key.indexOf("{")), classId: CLASS_LABEL.exec(key)?.[1] };
}

/**
 * Requests per class in the edge's Prometheus counter totals (`name{class="SS",...}`).
 *
 * @example
 * classCounts({ 'greenference_route_decisions_total{class="SS",pool="SS",site="a",outcome="own"}': 7 }); // { SS: 7 }
 */
export function classCounts(totals: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [key, value] of Object.entries(totals)) {
    const { name, classId } = seriesClass(key);
    if (DEMAND_COUNTERS.includes(name) && classId) out[classId] = (out[classId] ?? 0) + value;
  }
  return out;
}

/**
 * Measured demand per class (req/s) between two samples; a counter that went down (a reset)
 * counts from zero. Undefined when the samples are not in time order.
 */
export function measuredDemand(previous: DemandSample, current: DemandSample): Record<string, number> | undefined {
  const seconds = (current.atMs - previous.atMs) / 1000;
  if (!(seconds > 0)) return undefined;
  const out: Record<string, number> = {};
  for (const [cls, n] of Object.entries(current.counts)) {
    const before = previous.counts[cls] ?? 0;
    out[cls] = (n >= before ? n - before : n) / seconds;
  }
  return out;
}

/**
 * The demand to plan a slot for, per class: the larger of the measured rate and the peak of the
 * class's load forecast over [nowMs, nowMs + horizonMs) (Heron plans for the slot's peak).
 */
export function slotDemand(classes: readonly string[], measured: Record<string, number> | undefined, loadForecasts: readonly Forecast[], nowMs: number, horizonMs: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const cls of classes) {
    const forecast = loadForecasts.find((f) => f.kind === "load" && f.subject.kind === "class" && f.subject.id === cls);
    const peak = forecast ? Math.max(...valuesOver(forecast, nowMs, nowMs + horizonMs)) : 0;
    out[cls] = Math.max(measured?.[cls] ?? 0, peak);
  }
  return out;
}
