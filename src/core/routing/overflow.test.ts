import { describe, expect, it } from "vitest";
import type { ClassId } from "../schemas/ids.ts";
import { overflowOrder } from "./overflow.ts";

const labels = ["S", "M", "L"];
const bins3x3 = Object.fromEntries(labels.flatMap((i, a) => labels.map((o, b) => [i + o, { inputBin: a, outputBin: b }])));

describe("overflowOrder", () => {
  it("lists larger pools nearest first, a longer output before a longer input", () => {
    expect(overflowOrder(bins3x3, "SS" as ClassId)).toEqual(["SM", "MS", "SL", "MM", "LS", "ML", "LM", "LL"]);
    expect(overflowOrder(bins3x3, "MM" as ClassId)).toEqual(["ML", "LM", "LL"]);
  });

  it("has nowhere to go from the largest class or an unknown one", () => {
    expect(overflowOrder(bins3x3, "LL" as ClassId)).toEqual([]);
    expect(overflowOrder(bins3x3, "XX" as ClassId)).toEqual([]);
  });
});
