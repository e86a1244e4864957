import type { PredictorDO } from "../../durable-objects/predictor-do.ts";
import { ConditionedOutputPredictor, PredictorState, type OutputObservation } from "../core/classify/conditioned-predictor.ts";
import type { OutputLengthPredictor, OutputQuery } from "../core/classify/output-predictor.ts";

/** Observations an isolate holds for its next exchange; older ones go first past this. */
const PENDING_LIMIT = 1000;

/**
 * The isolate's view of the shared output-length predictor: it predicts from its copy of the
 * PredictorDO's state, learns locally at once, and in the background of a request (at most every
 * `syncMs`, or at once while it has never synced) sends what it learned and takes the merged state
 * back, so every isolate classifies with what all of them learned.
 *
 * @example
 * const predictor = new SharedOutputPredictor(() => Date.now());
 * predictor.syncInBackground(ctx, () => predictorStub(env));
 */
export class SharedOutputPredictor implements OutputLengthPredictor {
  private readonly local = new ConditionedOutputPredictor();
  private pending: OutputObservation[] = [];
  private lastSyncMs: number | undefined;
  private syncing = false;

  constructor(
    private readonly now: () => number,
    private readonly syncMs = 5_000,
  ) {}

  predictBin(query: OutputQuery): number | undefined {
    return this.local.predictBin(query);
  }

  observe(query: OutputQuery, completionTokens: number): void {
    const o = this.local.observation(query, completionTokens);
    if (!o) return;
    this.local.apply(o);
    this.pending.push(o);
    if (this.pending.length > PENDING_LIMIT) this.pending.splice(0, this.pending.length - PENDING_LIMIT);
  }

  /** Exchanges with PredictorDO in the background of `ctx` when due; `stub` is only called then. */
  syncInBackground(ctx: ExecutionContext, stub: () => DurableObjectStub<PredictorDO>): void {
    if (this.syncing) return;
    const due = this.lastSyncMs === undefined || (this.pending.length > 0 && this.now() - this.lastSyncMs >= this.syncMs) || this.now() - this.lastSyncMs >= 6 * this.syncMs;
    if (due) ctx.waitUntil(this.sync(stub()));
  }

  /** Sends the pending observations and adopts the merged state (plus what arrived meanwhile); on failure they are kept for the next exchange. */
  async sync(stub: DurableObjectStub<PredictorDO>): Promise<void> {
    const sent = this.pending;
    this.pending = [];
    this.syncing = true;
    this.lastSyncMs = this.now();
    try {
      this.local.load(PredictorState.parse(await stub.exchange(sent)));
      // What was learned while the exchange was in flight is not in the merged state yet.
      for (const o of this.pending) this.local.apply(o);
    } catch (error) {
      this.pending = [...sent, ...this.pending].slice(-PENDING_LIMIT);
      console.error("could not exchange predictor observations", error);
    } finally {
      this.syncing = false;
    }
  }
}
