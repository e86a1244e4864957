import type { SettledReceipt } from "../core/schemas/settled-receipt.ts";

/** Receipts waiting beyond this many (the ledger slower than the edge's traffic) drop the oldest. */
const MAX_PENDING = 10_000;
/** Receipts sent in one call. */
const MAX_BATCH = 500;

/**
 * Keyless receipts on their way to the one ANONYMOUS ledger, one call in flight per isolate: what
 * settles while a call is under way goes in the next, so under load the isolate sends batches
 * rather than a call per request (one Durable Object call per keyless request cost a quarter of
 * the routing Worker's throughput in `bench edge`), and alone a request is sent at once. The
 * promise `add` returns settles once the receipt was sent (or failed: those receipts are dropped
 * and logged), so a request's `waitUntil` covers it.
 */
export class ReceiptBatcher {
  private pending: SettledReceipt[] = [];
  private sending: Promise<void> | null = null;
  private dropped = 0;

  add(receipt: SettledReceipt, send: (batch: SettledReceipt[]) => Promise<void>): Promise<void> {
    this.pending.push(receipt);
    if (this.pending.length > MAX_PENDING) {
      this.pending.shift();
      this.dropped++;
    }
    return (this.sending ??= this.drain(send));
  }

  private async drain(send: (batch: SettledReceipt[]) => Promise<void>): Promise<void> {
    try {
      while (this.pending.length > 0) {
        const batch = this.pending.splice(0, MAX_BATCH);
        try {
          await send(batch);
        } catch (error) {
          console.error(`could not keep ${batch.length} keyless receipts`, error);
        }
      }
      if (this.dropped > 0) console.error(`dropped ${this.dropped} keyless receipts: more than ${MAX_PENDING} waited for the ledger`);
      this.dropped = 0;
    } finally {
      this.sending = null;
    }
  }
}
