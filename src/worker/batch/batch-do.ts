import { BatchDurableObject } from "../../../durable-objects/batch-do.ts";
import type { BatchServing } from "../../../durable-objects/batch-serving.ts";
import { controlStub } from "../../../durable-objects/control-do.ts";
import { createEdgeContext } from "../edge-context.ts";
import { batchSiteClient } from "./batch-site-client.ts";
import { runBatchLine } from "./batch-line-run.ts";
import { lineClass } from "./line-class.ts";

/**
 * The edge's classification and serving path for a BatchDO's lines: the object's own per-isolate
 * edge context (its snapshot cache, predictor, counters and failing sites), reaching sites through
 * `batchSiteClient`.
 */
export function workerBatchServing(): BatchServing {
  const edge = createEdgeContext({ siteClient: batchSiteClient });
  return {
    async round(env) {
      const state = await edge.cache.get(env);
      return {
        routing: state.snapshot.routing,
        apiKeys: state.snapshot.apiKeys,
        classify: (line, owner) => lineClass(line, state.snapshot.routing!.scheme, edge.predictor, owner),
        serve: (line, caller, release) => runBatchLine(line, caller, release, env, edge, state),
      };
    },
    flush: (env) => edge.metrics.flush(controlStub(env)),
  };
}

/** The Batch API's Durable Object (binding BATCH): a batch's storage and dispatch, serving its lines through this Worker. */
export class BatchDO extends BatchDurableObject {
  protected readonly serving = workerBatchServing();
}
