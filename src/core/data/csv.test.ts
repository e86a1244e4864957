import { describe, expect, it } from "vitest";
import { readCsv } from "./csv.ts";
import { DataError } from "./data-error.ts";

describe("readCsv", () => {
  it("reads a header and rows, drops CR, skips blank lines and keeps 1-based line numbers", () => {
    const table = readCsv("a, b\r\n1,2\r\n\r\n3,4", "t.csv");
    expect(table.header).toEqual(["a", "b"]);
    expect(table.headerLine).toBe(1);
    expect(table.rows).toEqual([
      { line: 2, fields: ["1", "2"] },
      { line: 4, fields: ["3", "4"] },
    ]);
  });

  it("handles double-quoted fields with commas, escaped quotes and empty cells", () => {
    const table = readCsv('x,y,z\n"a,b","say ""hi""",\n,"",last\n', "q.csv");
    expect(table.rows.map((r) => r.fields)).toEqual([
      ["a,b", 'say "hi"', ""],
      ["", "", "last"],
    ]);
  });

  it("names the file and line of a row with the wrong number of fields", () => {
    expect(() => readCsv("a,b\n1,2\n1,2,3\n", "f.csv")).toThrow(new DataError("f.csv line 3: expected 2 fields (a,b), got 3"));
  });

  it("rejects an unterminated quote and an empty file", () => {
    expect(() => readCsv('a\n"open\n', "u.csv")).toThrow(/u\.csv line 2: unterminated quoted field/);
    expect(() => readCsv("\n\n", "e.csv")).toThrow(/e\.csv: empty file/);
  });
});
