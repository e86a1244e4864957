import { describe, expect, it } from "vitest";
import { markdownTable } from "./markdown-table.ts";

describe("markdownTable", () => {
  it("pads every column to its widest cell", () => {
    expect(markdownTable(["a", "bb"], [["ccc", "d"]]).split("\n")).toEqual(["| a   | bb |", "| --- | -- |", "| ccc | d  |"]);
  });
});
