import { carbonLedger } from "../../durable-objects/carbon-ledger-do.ts";
import { REQUEST_ID } from "../core/schemas/settled-receipt.ts";
import { ANONYMOUS } from "../edge/identity.ts";
import { receiptBounds } from "../edge/receipt-bounds.ts";
import { authenticateCaller } from "./auth.ts";
import type { EdgeContext } from "./inference.ts";
import { openAiError } from "./openai-error.ts";

/**
 * `GET /v1/usage/receipts/{request_id}`: the settled receipt (SettledReceipt) of one of the calling
 * key's recent requests, by the `x-request-id` of its answer (a batch line's `request_id`): what a
 * stream without `stream_options.include_usage`, or a client whose connection dropped, never saw.
 * Callers without a key (INFERENCE_ACCESS "open") read the receipts of keyless requests, whose
 * random ids only their callers know. Another key's receipt, an expired one and one still in
 * flight are all the same 404: receipts are written when an answer ends, and a 409 for one in
 * flight would need a write when each request starts.
 */
export async function settledReceipt(request: Request, env: Env, edge: EdgeContext, id: string): Promise<Response> {
  const { snapshot } = await edge.cache.get(env);
  const caller = await authenticateCaller(request, env, snapshot.apiKeys);
  if (!caller.ok) return caller.response;
  if (!REQUEST_ID.test(id)) {
    return openAiError(400, "request_id must be an answer's x-request-id: 'req_' and 24 lowercase hex digits.", { param: "request_id", code: "invalid_value" });
  }
  const receipt = await carbonLedger(env, caller.keyId ?? ANONYMOUS).receipt(id, edge.now());
  if (!receipt) {
    const { maxCount, maxAgeMs } = receiptBounds(env);
    const kept = `the last ${maxCount} requests for ${Math.round(maxAgeMs / 1000)} s`;
    return openAiError(404, `No settled receipt for request ${id} under this key. A receipt is kept when its answer ends (a stream's when it is read to its end or closed), for ${kept}.`, { param: "request_id", code: "not_found" });
  }
  return Response.json(receipt);
}
