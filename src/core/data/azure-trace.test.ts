import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { parseAzureTrace } from "./azure-trace.ts";
import { DataError } from "./data-error.ts";

const FILE = resolve(process.cwd(), "data/azure-llm-2023/AzureLLMInferenceTrace_conv.csv");
const HEADER = "TIMESTAMP,ContextTokens,GeneratedTokens\n";

describe("parseAzureTrace on the real conversation hour", () => {
  const trace = parseAzureTrace(readFileSync(FILE, "utf8"), "AzureLLMInferenceTrace_conv.csv");

  it("reads every request in order", () => {
    // 19,367 lines (CRLF, no final newline): header + 19,366 requests. data/README.md says 19,365.
    expect(trace.requests).toHaveLength(19_366);
    expect(trace.warnings).toEqual([]);
    expect(trace.requests[0]).toEqual({ arrivalS: 0, inputTokens: 374, outputTokens: 44 });
    expect(trace.requests.at(-1)).toMatchObject({ inputTokens: 197, outputTokens: 183 });
    expect(trace.requests.every((r, i) => i === 0 || r.arrivalS >= trace.requests[i - 1]!.arrivalS)).toBe(true);
  });

  it("places the first and last requests at their wall-clock times", () => {
    // 2023-11-16 18:15:46.6805900 and 19:14:08.4025270 (file's first and last rows)
    expect(trace.startEpochMs).toBeCloseTo(Date.parse("2023-11-16T18:15:46.680Z") + 0.59, 4);
    const lastS = (Date.parse("2023-11-16T19:14:08.402Z") - Date.parse("2023-11-16T18:15:46.680Z")) / 1000 + (0.000527 - 0.00059);
    expect(trace.requests.at(-1)!.arrivalS).toBeCloseTo(lastS, 6);
  });
});

describe("parseAzureTrace on hand-written input", () => {
  it("orders mixed-precision timestamps by value, not by text", () => {
    const text = HEADER + "2023-11-16 18:15:46.68,10,1\n2023-11-16 18:15:46.6805900,20,2\n2023-11-16 18:15:47,30,3\n";
    const trace = parseAzureTrace(text, "mixed.csv");
    expect(trace.requests.map((r) => r.arrivalS)).toEqual([0, expect.closeTo(0.00059, 9), expect.closeTo(0.32, 9)]);
    expect(trace.warnings).toEqual([]);
  });

  it("sorts rows out of order stably and says so", () => {
    const text = HEADER + "2023-11-16 18:00:02,1,1\n2023-11-16 18:00:01,2,2\n2023-11-16 18:00:02,3,3\n2023-11-16 18:00:01,4,4\n";
    const trace = parseAzureTrace(text, "unsorted.csv");
    expect(trace.requests.map((r) => r.inputTokens)).toEqual([2, 4, 1, 3]);
    expect(trace.requests.map((r) => r.arrivalS)).toEqual([0, 0, 1, 1]);
    expect(trace.warnings).toEqual(["unsorted.csv: 2 rows were earlier than the row before them; sorted by timestamp"]);
  });

  it("names file, line and field of a bad cell", () => {
    const rows = Array.from({ length: 15 }, (_, i) => `2023-11-16 18:00:${String(i).padStart(2, "0")}.5,${i + 1},3`);
    const text = HEADER + rows.join("\n") + "\n2023-11-16 18:00:20.1,abc,3\n";
    expect(() => parseAzureTrace(text, "AzureLLMInferenceTrace_conv.csv")).toThrow(
      new DataError('AzureLLMInferenceTrace_conv.csv line 17: field ContextTokens: expected a non-negative integer, got "abc"'),
    );
  });

  it("rejects negative counts, bad timestamps, missing columns and an empty trace", () => {
    expect(() => parseAzureTrace(HEADER + "2023-11-16 18:00:00,5,-1\n", "t.csv")).toThrow(/t\.csv line 2: field GeneratedTokens: expected a non-negative integer, got "-1"/);
    expect(() => parseAzureTrace(HEADER + "2023-11-31 18:00:00,5,1\n", "t.csv")).toThrow(/t\.csv line 2: field TIMESTAMP: expected a timestamp/);
    expect(() => parseAzureTrace("TIMESTAMP,ContextTokens\n2023-11-16 18:00:00,5\n", "t.csv")).toThrow(/t\.csv line 1: missing column GeneratedTokens/);
    expect(() => parseAzureTrace(HEADER, "t.csv")).toThrow(/t\.csv: no requests/);
  });
});
