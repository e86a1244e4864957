import { describe, expect, it } from "vitest";
import { z } from "zod";
import { errorParam, invalidSummary, issueParam, leadingIssue, paramText } from "./issue-param.ts";

describe("paramText", () => {
  it("joins keys with dots and puts array indexes in brackets", () => {
    expect(paramText(["messages", 0, "content"])).toBe("messages[0].content");
    expect(paramText(["sites", 1, "gpus", 0, "count"])).toBe("sites[1].gpus[0].count");
    expect(paramText([2, "unit"])).toBe("[2].unit");
    expect(paramText([])).toBe("");
  });

  it("names an unknown key, nested in an array, the same way", () => {
    const Fleet = z.strictObject({ sites: z.array(z.strictObject({ id: z.string() })) });
    const error = Fleet.safeParse({ sites: [{ id: "a" }, { id: "b", idd: "c" }] }).error!;
    expect(paramText(issueParam(leadingIssue(error)!))).toBe("sites[1].idd");
    expect(errorParam(error)).toBe("sites[1].idd");
    expect(errorParam(z.string().safeParse(1).error!)).toBeNull();
  });
});

describe("invalidSummary", () => {
  it("says in one line what is invalid, at which field, and how many more issues there are", () => {
    const Clock = z.object({ minMhz: z.number().int(), maxMhz: z.number().int() });
    const two = Clock.safeParse({ minMhz: 1.5, maxMhz: "x" }).error!;
    expect(invalidSummary("clock range", two)).toEqual({ message: "invalid clock range: Invalid input: expected int, received number at minMhz (and 1 more)", param: "minMhz" });
    expect(invalidSummary("name", z.string().safeParse(1).error!)).toEqual({ message: "invalid name: Invalid input: expected string, received number", param: null });
  });
});
