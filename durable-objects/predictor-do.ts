import { DurableObject } from "cloudflare:workers";
import { z } from "zod";
import { ConditionedOutputPredictor, OutputObservation, type PredictorState } from "../src/core/classify/conditioned-predictor.ts";

/** Observations one exchange may carry; an isolate sends what it learned since its last exchange. */
export const OBSERVATIONS_PER_EXCHANGE = 1000;
/** Histograms the shared predictor keeps (LRU), so its state stays one storage value and one RPC answer. */
export const SHARED_PREDICTOR_ENTRIES = 2000;

const Observations = z.array(OutputObservation).max(OBSERVATIONS_PER_EXCHANGE);

/**
 * The edge's output-length predictor, shared: one object (`idFromName("global")`) holds the
 * conditioned predictor's histograms in storage; every isolate sends it the observations it made
 * and gets back the merged state, so what one isolate learns classifies the requests of all, and an
 * evicted isolate loses nothing but its last unsent observations.
 */
export class PredictorDO extends DurableObject<Env> {
  private readonly predictor = new ConditionedOutputPredictor({ maxEntries: SHARED_PREDICTOR_ENTRIES });

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    void ctx.blockConcurrencyWhile(async () => {
      const stored = await ctx.storage.get<PredictorState>("state");
      if (stored) this.predictor.load(stored);
    });
  }

  /** Learns `observations` (invalid ones are dropped) and answers the merged state. */
  async exchange(observations: unknown): Promise<PredictorState> {
    const parsed = Observations.safeParse(observations);
    if (parsed.success && parsed.data.length > 0) {
      for (const o of parsed.data) this.predictor.apply(o);
      await this.ctx.storage.put("state", this.predictor.state());
    }
    return this.predictor.state();
  }
}

/** The one shared predictor object. */
export function predictorStub(env: Env): DurableObjectStub<PredictorDO> {
  return env.PREDICTOR.get(env.PREDICTOR.idFromName("global"));
}
