import { describe, expect, it } from "vitest";
import { meetsSlo } from "./meets-slo.ts";

const slo = { ttftMs: 200, tbtMs: 50 };

describe("meetsSlo", () => {
  it("needs every measured latency within its bound", () => {
    expect(meetsSlo({ ttftMs: 200, tbtMs: 50, e2eMs: 5_000 }, slo)).toBe(true);
    expect(meetsSlo({ ttftMs: 201, tbtMs: 10, e2eMs: 500 }, slo)).toBe(false);
    expect(meetsSlo({ ttftMs: 10, tbtMs: 51, e2eMs: 500 }, slo)).toBe(false);
    expect(meetsSlo({ ttftMs: 10, tbtMs: undefined, e2eMs: 500 }, slo)).toBe(true);
    expect(meetsSlo({ ttftMs: 10, tbtMs: 10, e2eMs: 61_000 }, { ...slo, e2eMs: 60_000 })).toBe(false);
  });

  it("judges nothing it could not measure", () => {
    expect(meetsSlo({ ttftMs: undefined, tbtMs: undefined, e2eMs: 500 }, slo)).toBeUndefined();
    expect(meetsSlo({ ttftMs: undefined, tbtMs: Number.NaN, e2eMs: 500 }, { ...slo, e2eMs: 400 })).toBe(false);
  });
});
