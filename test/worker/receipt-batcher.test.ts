import { describe, expect, it } from "vitest";
import type { SettledReceipt } from "../../src/core/schemas/settled-receipt.ts";
import { ReceiptBatcher } from "../../src/worker/receipt-batcher.ts";

const receipt = (n: number) => ({ id: `req_${n.toString(16).padStart(24, "0")}` }) as SettledReceipt;

describe("ReceiptBatcher: keyless receipts to the ledger, one call in flight", () => {
  it("sends a receipt alone at once, and what settles during a call in the next one", async () => {
    const calls: string[][] = [];
    let release!: () => void;
    const send = (batch: SettledReceipt[]) => {
      calls.push(batch.map((r) => r.id));
      return calls.length === 1 ? new Promise<void>((r) => (release = r)) : Promise.resolve();
    };
    const batcher = new ReceiptBatcher();
    const first = batcher.add(receipt(1), send);
    const during = [2, 3, 4].map((n) => batcher.add(receipt(n), send));
    expect(calls).toEqual([[receipt(1).id]]);
    release();
    await Promise.all([first, ...during]);
    expect(calls).toEqual([[receipt(1).id], [2, 3, 4].map((n) => receipt(n).id)]);
    // Idle again: the next receipt goes alone, at once.
    await batcher.add(receipt(5), send);
    expect(calls.at(-1)).toEqual([receipt(5).id]);
  });

  it("drops a batch whose call failed and goes on with the next", async () => {
    const sent: string[] = [];
    let calls = 0;
    const send = async (batch: SettledReceipt[]) => {
      if (calls++ === 0) throw new Error("ledger unavailable");
      sent.push(...batch.map((r) => r.id));
    };
    const batcher = new ReceiptBatcher();
    await Promise.all([batcher.add(receipt(1), send), batcher.add(receipt(2), send)]);
    expect(sent).toEqual([receipt(2).id]);
  });
});
