import { z } from "zod";
import { ServiceTier } from "./flex.ts";
import { UsageReceipt } from "./receipt.ts";

/** The `x-request-id` of an answer (src/worker/request-id.ts): `req_` and 24 lowercase hex digits. */
export const REQUEST_ID = /^req_[0-9a-f]{24}$/;

/**
 * How an answer ended: "complete" (the site finished it), "broken" (the site failed or went quiet
 * after its head, and the client's stream ended with an error event) or "client_left" (the client
 * closed its stream first). The last two settle what was served, estimated from the events sent.
 */
export const AnswerEnding = z.enum(["complete", "broken", "client_left"]);
export type AnswerEnding = z.infer<typeof AnswerEnding>;

/**
 * One request's settled receipt, as its key's CarbonLedgerDO keeps it and
 * `GET /v1/usage/receipts/{request_id}` answers it. `receipt` is what the answer carried (or, for
 * a stream, would have carried) in `usage.greenference`; its `energy_source` says whether the
 * energy was measured, reported by the site or estimated from tokens.
 */
export const SettledReceipt = z.object({
  object: z.literal("greenference.receipt"),
  /** The answer's `x-request-id` (a batch line's `request_id`). */
  id: z.string().regex(REQUEST_ID),
  /** When the request arrived and when its answer ended (Unix seconds). */
  created: z.number().int().nonnegative(),
  settled: z.number().int().nonnegative(),
  model: z.string(),
  stream: z.boolean(),
  ending: AnswerEnding,
  /** The tier it ran at when it named `service_tier`, else null. */
  service_tier: ServiceTier.nullable(),
  receipt: UsageReceipt,
  /** Tokens settled: the site's usage, or for an answer cut short the prompt and the output events sent. */
  tokens: z.object({ prompt: z.number().nonnegative(), completion: z.number().nonnegative() }),
});
export type SettledReceipt = z.infer<typeof SettledReceipt>;
