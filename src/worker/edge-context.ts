import { predictorStub } from "../../durable-objects/predictor-do.ts";
import type { AppOptions } from "./app.ts";
import type { EdgeContext } from "./inference.ts";
import { FailingSites } from "./failing-sites.ts";
import { ReceiptBatcher } from "./receipt-batcher.ts";
import { EdgeMetrics } from "./metrics.ts";
import { SharedOutputPredictor } from "./shared-predictor.ts";
import { SnapshotCache } from "./snapshot-cache.ts";

/**
 * The per-isolate state the edge serves from (the app's, and a BatchDO's for its lines). Without
 * a predictor in `options`, the output-length predictor is the one every isolate shares through
 * PredictorDO (`syncPredictor` exchanges with it).
 */
export function createEdgeContext(options: AppOptions): EdgeContext {
  const now = options.now ?? (() => Date.now());
  const shared = options.predictor ? undefined : new SharedOutputPredictor(now, options.predictorSyncMs ?? 5_000);
  return {
    cache: new SnapshotCache(now, options.snapshotTtlMs ?? 1_000),
    metrics: new EdgeMetrics(now, options.metricsFlushMs ?? 5_000),
    predictor: options.predictor ?? shared!,
    ...(shared ? { syncPredictor: (ctx: ExecutionContext, env: Env) => shared.syncInBackground(ctx, () => predictorStub(env)) } : {}),
    siteClient: options.siteClient,
    now,
    maxBodyBytes: options.maxBodyBytes ?? 4 * 1024 * 1024,
    firstByteTimeoutMs: options.firstByteTimeoutMs ?? 60_000,
    idleTimeoutMs: options.idleTimeoutMs,
    failing: new FailingSites(),
    keylessReceipts: new ReceiptBatcher(),
    failureHoldMs: options.failureHoldMs,
  };
}
