import type { RoutingSnapshot } from "../src/core/routing/routing-snapshot.ts";
import type { BatchLine } from "../src/core/schemas/batch.ts";
import type { ClassId } from "../src/core/schemas/ids.ts";
import type { Identity } from "../src/edge/identity.ts";
import type { ApiKeyCheck } from "./api-key-store.ts";

/** What became of one line: answered (into the output or error file), or to run again later. */
export type LineOutcome =
  | { kind: "done"; ok: boolean; text: string }
  | { kind: "retry"; countsAsAttempt: boolean; why: string; failedSite: string | null }
  | { kind: "budget"; retryAfterS: number };

/**
 * Where and how a line may run: at the sites the deferral scheduler released it to (null: wherever
 * routing sends it), less those that failed it before; on spare instances only unless its deadline
 * makes it interactive traffic (`spareOnly` false).
 */
export interface LineRelease {
  sites: ReadonlySet<string> | null;
  avoid: ReadonlySet<string>;
  spareOnly: boolean;
}

/** The edge as one dispatch round sees it: its routing and API keys, and its classification and serving path on that view. */
export interface ServingRound {
  routing: RoutingSnapshot | null;
  apiKeys: Record<string, ApiKeyCheck>;
  /** The class the edge would serve a line as for `owner` (null for a body its endpoint refuses); needs `routing`. */
  classify(line: BatchLine, owner: string): ClassId | null;
  /** Runs one line as `caller` through the edge's serving path, as deferred work within `release`. */
  serve(line: BatchLine, caller: Identity, release: LineRelease): Promise<LineOutcome>;
}

/**
 * What a BatchDO needs from the edge Worker: its classification and serving path (model check,
 * classification, carbon budget, routing, signing, receipts) and its counters. The Worker supplies it by subclassing
 * `BatchDurableObject` (src/worker/batch/batch-do.ts), so the object imports no Worker module and
 * the dependency points from the Worker to the object.
 */
export interface BatchServing {
  /** The edge's view now (the isolate's cached snapshot). */
  round(env: Env): Promise<ServingRound>;
  /** Sends the counters the served lines added to ControlDO. */
  flush(env: Env): Promise<void>;
}
