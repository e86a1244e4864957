import type { IncomingMessage } from "node:http";
import { RECEIPT_HEADERS } from "../../src/core/schemas/receipt.ts";
import type { Engine } from "../engines/engine.ts";
import type { EnergyMeter, MeteredEnergy } from "../receipts/energy-meter.ts";
import { usageReceiptRewriter } from "../receipts/usage-receipt-rewriter.ts";
import type { RequestTracker, TrackedRequest } from "../telemetry/request-tracker.ts";
import { header } from "../util/http.ts";
import type { Prefilled } from "./prefill-pairing.ts";
import { ResponseTap } from "./response-tap.ts";

/** What the gateway knows of a request when it sends it to an engine replica. */
export interface AttemptFacts {
  tracker: RequestTracker | undefined;
  meter: EnergyMeter | undefined;
  tracked: TrackedRequest | undefined;
  inputTokens: number;
  /** The client asked for an SSE stream. */
  streams: boolean;
}

/**
 * Follows one attempt at `engine` for the request tracker and the energy meter: tells the tracker
 * where the request went, reads the answer as it passes (`observe`), puts the measured receipt
 * (with the prefill's energy, when another replica prefilled it) into the answer's usage
 * (`rewrite`), and closes the request's books once it is answered (`answered`) or given up
 * (`abandon`). A request split between a prefill and a decode engine is recorded by the gateway,
 * as neither engine saw all of it.
 */
export function meterAttempt(f: AttemptFacts, engine: Engine, prefilled: Prefilled | undefined) {
  const { tracker, meter, tracked } = f;
  if (tracker && tracked) tracker.placed(tracked, engine.launch.instanceId);
  const handedOff = prefilled?.fields !== undefined;
  // A decode replica that pulled the KV computes one prompt token.
  const metered = meter && !engine.recordsRequests ? meter.begin(engine.launch.gpus, handedOff ? 1 : f.inputTokens, f.streams) : undefined;
  // Known once the prefill answered: an SGLang prefill may answer while its decode partner runs.
  const prefillJ = prefilled?.energyJ.then((j) => j ?? 0) ?? Promise.resolve(0);
  let tap: ResponseTap | undefined;
  let receipt: MeteredEnergy | undefined;
  return {
    observe: (head: IncomingMessage) => {
      tap = new ResponseTap(header(head.headers["content-type"]), header(head.headers[RECEIPT_HEADERS.energyJ]), () => {
        if (tracker && tracked) tracker.token(tracked);
        metered?.token();
      });
      return (chunk: Buffer) => tap!.feed(chunk);
    },
    rewrite: (head: IncomingMessage) =>
      (metered || handedOff) && (head.statusCode ?? 500) < 400
        ? usageReceiptRewriter(
            header(head.headers["content-type"]),
            async (usage) => {
              if (!metered) return undefined;
              const tokens = Number(usage?.completion_tokens);
              receipt = await metered.finish(Number.isInteger(tokens) && tokens >= 0 ? tokens : undefined);
              return receipt;
            },
            prefillJ,
          )
        : undefined,
    answered: (status: number) => {
      if (status >= 400) metered?.abandon();
      if (!tap || !tracker || !tracked) return;
      const facts = tap.end();
      const own = facts.energyJ ?? receipt?.energyJ;
      void prefillJ.then((j) => tracker.finish(tracked, { ...facts, energyJ: own === undefined ? undefined : own + j }, { inputTokens: f.inputTokens, record: status < 400 && (handedOff || !engine.recordsRequests) }));
    },
    abandon: () => metered?.abandon(),
  };
}
