import type { Slo } from "../schemas/request-class.ts";

/** What a site measured of one answered request, ms; undefined where it could not tell. */
export interface RequestLatency {
  ttftMs: number | undefined;
  tbtMs: number | undefined;
  e2eMs: number;
}

/**
 * Whether one answered request met its class's SLO: its TTFT, its mean TBT and (where the class
 * bounds it) its end-to-end time each within the bound. A latency the site could not measure (an
 * unstreamed answer shows no first token) is not judged; undefined when nothing could be judged.
 * The class SLOs bound a p99, so a class meets its SLO when at least 99% of its requests do.
 *
 * @example
 * meetsSlo({ ttftMs: 120, tbtMs: 30, e2eMs: 900 }, { ttftMs: 200, tbtMs: 50 }); // true
 * meetsSlo({ ttftMs: undefined, tbtMs: undefined, e2eMs: 900 }, { ttftMs: 200, tbtMs: 50 }); // undefined
 */
export function meetsSlo(latency: RequestLatency, slo: Slo): boolean | undefined {
  const checks: boolean[] = [];
  if (latency.ttftMs !== undefined && Number.isFinite(latency.ttftMs)) checks.push(latency.ttftMs <= slo.ttftMs);
  if (latency.tbtMs !== undefined && Number.isFinite(latency.tbtMs)) checks.push(latency.tbtMs <= slo.tbtMs);
  if (slo.e2eMs !== undefined) checks.push(latency.e2eMs <= slo.e2eMs);
  return checks.length === 0 ? undefined : checks.every(Boolean);
}
