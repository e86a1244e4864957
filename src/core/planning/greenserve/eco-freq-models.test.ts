import { describe, expect, it } from "vitest";
import { gpuSpec } from "../../model/gpu-specs.ts";
import { ecoFreqSet } from "./eco-freq-models.ts";

const h100 = gpuSpec("H100-80GB");
const BOUNDS = { minMhz: 1005, maxMhz: 1590 };

describe("ecoFreqSet", () => {
  it("is the sweet spot and the max clock, moved into the plan's bounds and onto the grid", () => {
    expect(ecoFreqSet(h100, { minMhz: 345, maxMhz: 1980 })).toEqual([1395, 1980]);
    expect(ecoFreqSet(h100, BOUNDS)).toEqual([1395, 1590]);
    expect(ecoFreqSet(h100, { minMhz: 1402, maxMhz: 1600 })).toEqual([1410, 1590]);
    expect(ecoFreqSet(h100, { minMhz: 600, maxMhz: 1200 })).toEqual([1200]);
  });
});
