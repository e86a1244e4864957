import { describe, expect, it } from "vitest";
import { compareInstants, instantToEpochMs, parseTimestamp, secondsBetween } from "./timestamp.ts";

describe("parseTimestamp", () => {
  it("reads 7-digit and 2-digit fractions of the same instant alike", () => {
    const long = parseTimestamp("2023-11-16 18:15:46.6800000")!;
    const short = parseTimestamp("2023-11-16 18:15:46.68")!;
    expect(long).toEqual(short);
    expect(instantToEpochMs(short)).toBeCloseTo(Date.parse("2023-11-16T18:15:46.680Z"), 6);
  });

  it("keeps sub-microsecond differences that an epoch-ms double would blur", () => {
    const a = parseTimestamp("2023-11-16 18:15:46.6805900")!;
    const b = parseTimestamp("2023-11-16 18:15:46.6805901")!;
    expect(secondsBetween(a, b)).toBeCloseTo(1e-7, 12);
    expect(compareInstants(a, b)).toBeLessThan(0);
  });

  it("accepts no fraction, a T separator and UTC offsets", () => {
    const utc = Date.parse("2022-01-01T00:00:00Z");
    expect(instantToEpochMs(parseTimestamp("2022-01-01 00:00:00+00:00")!)).toBe(utc);
    expect(instantToEpochMs(parseTimestamp("2022-01-01T01:30:00+01:30")!)).toBe(utc);
    expect(instantToEpochMs(parseTimestamp("2021-12-31 19:00:00-05:00")!)).toBe(utc);
    expect(instantToEpochMs(parseTimestamp("2022-01-01T00:00:00Z")!)).toBe(utc);
  });

  it("rejects impossible dates and malformed text", () => {
    for (const bad of ["2023-02-29 00:00:00", "2023-11-16 24:00:00", "2023-13-01 00:00:00", "2023-11-16", "16/11/2023 18:15:46", "2023-11-16 18:15:46.", ""]) {
      expect(parseTimestamp(bad), bad).toBeUndefined();
    }
    expect(parseTimestamp("2024-02-29 00:00:00")).toBeDefined();
  });
});
