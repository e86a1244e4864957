import type { RoutingSnapshot } from "../src/core/routing/routing-snapshot.ts";
import type { BatchLine } from "../src/core/schemas/batch.ts";
import type { Identity } from "../src/edge/identity.ts";
import type { ApiKeyCheck } from "./api-key-store.ts";

/** What became of one line: answered (into the output or error file), or to run again later. */
export type LineOutcome =
  | { kind: "done"; ok: boolean; text: string }
  | { kind: "retry"; countsAsAttempt: boolean; why: string; failedSite: string | null }
  | { kind: "budget"; retryAfterS: number };

/** Where a line may run: the released sites (null: wherever routing sends it), less those that failed it before. */
export interface LineRelease {
  sites: ReadonlySet<string> | null;
  avoid: ReadonlySet<string>;
}

/** The edge as one dispatch round sees it: its routing and API keys, and its serving path on that view. */
export interface ServingRound {
  routing: RoutingSnapshot | null;
  apiKeys: Record<string, ApiKeyCheck>;
  /** Runs one line as `caller` through the edge's serving path, as deferred work within `release`. */
  serve(line: BatchLine, caller: Identity, release: LineRelease): Promise<LineOutcome>;
}

/**
 * What a BatchDO needs from the edge Worker: its serving path (model check, classification, carbon
 * budget, routing, signing, receipts) and its counters. The Worker supplies it by subclassing
 * `BatchDurableObject` (src/worker/batch/batch-do.ts), so the object imports no Worker module and
 * the dependency points from the Worker to the object.
 */
export interface BatchServing {
  /** The edge's view now (the isolate's cached snapshot). */
  round(env: Env): Promise<ServingRound>;
  /** Sends the counters the served lines added to ControlDO. */
  flush(env: Env): Promise<void>;
}
