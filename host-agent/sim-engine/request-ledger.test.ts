import { describe, expect, it } from "vitest";
import { RequestLedger, type SimRequestResult } from "./request-ledger.ts";

function tracked() {
  const tokens: number[] = [];
  const done: SimRequestResult[] = [];
  return { tokens, done, events: { onTokens: (n: number) => void tokens.push(n), onDone: (r: SimRequestResult) => void done.push(r), onAbort: () => undefined } };
}

describe("RequestLedger", () => {
  it("splits a prefill iteration's energy by prompt tokens and a decode iteration's equally per sequence", () => {
    const ledger = new RequestLedger();
    const a = tracked();
    const b = tracked();
    const ia = ledger.add({ arrivalS: 0, inputTokens: 100, outputTokens: 3 }, a.events);
    const ib = ledger.add({ arrivalS: 0, inputTokens: 300, outputTokens: 2 }, b.events);

    ledger.outcomes[ia]!.ttftS = 0.1;
    ledger.outcomes[ib]!.ttftS = 0.1;
    const prefill = ledger.book(40, ledger.decodingNow());
    expect(prefill.prefillChunks).toEqual([{ tokens: 100, context: 0 }, { tokens: 300, context: 0 }]);
    prefill.deliver();
    expect([a.tokens, b.tokens]).toEqual([[1], [1]]);

    ledger.outcomes[ib]!.e2eS = 0.2;
    ledger.book(6, ledger.decodingNow()).deliver();
    expect(b.done).toEqual([{ promptTokens: 300, completionTokens: 2, energyJ: 30 + 3, ttftS: 0.1, e2eS: 0.2, meanTbtS: NaN }]);
    expect(ledger.decodingNow()).toEqual([ia]);

    ledger.outcomes[ia]!.e2eS = 0.3;
    const last = ledger.book(5, ledger.decodingNow());
    expect(last.prefillChunks).toBeUndefined();
    last.deliver();
    expect(a.done[0]).toMatchObject({ completionTokens: 3, energyJ: 10 + 3 + 5 });
    expect(ledger.inFlight).toBe(0);
    expect(ledger.totals).toEqual({ promptTokens: 400, generationTokens: 5, finished: 2 });
    expect(ledger.requests[ia]).toBeUndefined();
  });

  it("charges a prompt whose KV was sent only for the token it computes", () => {
    const ledger = new RequestLedger();
    const [a, b] = [tracked(), tracked()];
    const ia = ledger.add({ arrivalS: 0, inputTokens: 1000, outputTokens: 2, cachedTokens: 1000 }, a.events);
    const ib = ledger.add({ arrivalS: 0, inputTokens: 99, outputTokens: 2 }, b.events);
    ledger.outcomes[ia]!.ttftS = 0.1;
    ledger.outcomes[ib]!.ttftS = 0.1;
    const prefill = ledger.book(100, ledger.decodingNow());
    expect(prefill.prefillChunks).toEqual([{ tokens: 1, context: 999 }, { tokens: 99, context: 0 }]);
    ledger.outcomes[ia]!.e2eS = 0.2;
    ledger.outcomes[ib]!.e2eS = 0.2;
    prefill.deliver();
    ledger.book(10, ledger.decodingNow()).deliver();
    expect(a.done[0]!.energyJ).toBeCloseTo(1 + 5, 12);
    expect(b.done[0]!.energyJ).toBeCloseTo(99 + 5, 12);
    expect(ledger.totals.promptTokens).toBe(1099);
  });
});
