import { describe, expect, it } from "vitest";
import { formatSloHeader, parseSloHeader } from "./slo-header.ts";

describe("the SLO header", () => {
  it("round-trips a class's SLO, with and without an end-to-end bound", () => {
    for (const slo of [{ ttftMs: 200, tbtMs: 50 }, { ttftMs: 31.2, tbtMs: 21.25, e2eMs: 60_000 }]) expect(parseSloHeader(formatSloHeader(slo))).toEqual(slo);
    expect(parseSloHeader(["ttft=1;tbt=2", "ttft=3;tbt=4"])).toEqual({ ttftMs: 1, tbtMs: 2 });
  });

  it("refuses malformed values rather than guessing", () => {
    for (const bad of [undefined, null, "", "ttft=200", "tbt=50", "ttft=200;tbt=50;x=1", "ttft=200;ttft=100;tbt=50", "ttft=-1;tbt=50", "ttft=0;tbt=50", "ttft=1e3;tbt=50", "ttft=200;tbt=", "ttft=200=1;tbt=50", `ttft=${"1".repeat(200)};tbt=5`]) {
      expect(parseSloHeader(bad)).toBeUndefined();
    }
  });
});
