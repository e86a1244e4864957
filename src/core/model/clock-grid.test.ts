import { describe, expect, it } from "vitest";
import { clockBounds, gridClockWithin, snapClock } from "./clock-grid.ts";
import { gpuSpec } from "./gpu-specs.ts";

const h100 = gpuSpec("H100-80GB");

describe("clock grid", () => {
  it("snaps to the GPU's step counted down from its max, within its range", () => {
    expect(snapClock(h100, 1000)).toBe(1005);
    expect(snapClock(h100, 5000)).toBe(h100.maxMhz);
    expect(snapClock(h100, 0)).toBeGreaterThanOrEqual(h100.minMhz);
  });

  it("keeps a grid clock inside the bounds, one step inwards where the nearest lies outside", () => {
    expect(gridClockWithin(h100, 1000, { minMhz: 1000, maxMhz: 1590 })).toBe(1005);
    expect(gridClockWithin(h100, 1402, { minMhz: 1402, maxMhz: 1600 })).toBe(1410);
    expect(gridClockWithin(h100, 1700, { minMhz: 1402, maxMhz: 1600 })).toBe(1590);
  });

  it("reads a plan's clock setting as the range it leaves the GPU", () => {
    expect(clockBounds({ mode: "locked", mhz: 1410 })).toEqual({ minMhz: 1410, maxMhz: 1410 });
    expect(clockBounds({ mode: "policy", policy: "ecofreq", minMhz: 1005, maxMhz: 1590 })).toEqual({ minMhz: 1005, maxMhz: 1590 });
  });
});
