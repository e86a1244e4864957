import { HistogramOutputPredictor } from "../core/classify/output-predictor.ts";
import type { AppOptions } from "./app.ts";
import type { EdgeContext } from "./inference.ts";
import { FailingSites } from "./failing-sites.ts";
import { EdgeMetrics } from "./metrics.ts";
import { SnapshotCache } from "./snapshot-cache.ts";

/** The per-isolate state the edge serves from (the app's, and a BatchDO's for its lines). */
export function createEdgeContext(options: AppOptions): EdgeContext {
  const now = options.now ?? (() => Date.now());
  return {
    cache: new SnapshotCache(now, options.snapshotTtlMs ?? 1_000),
    metrics: new EdgeMetrics(now, options.metricsFlushMs ?? 5_000),
    predictor: options.predictor ?? new HistogramOutputPredictor(),
    siteClient: options.siteClient,
    now,
    maxBodyBytes: options.maxBodyBytes ?? 4 * 1024 * 1024,
    firstByteTimeoutMs: options.firstByteTimeoutMs ?? 60_000,
    idleTimeoutMs: options.idleTimeoutMs,
    failing: new FailingSites(),
    failureHoldMs: options.failureHoldMs,
  };
}
