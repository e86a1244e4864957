import { describe, expect, it } from "vitest";
import type { OperatingOption } from "../operating-options.ts";
import { ecoFreqBounds } from "./clock-bounds.ts";

const option = (mhz: number, loadRps: number, sloExcess?: number): OperatingOption => ({ mhz, loadRps, powerW: mhz, e2eMs: 1000, gpuPowerW: mhz / 2, cost: 1, ...(sloExcess === undefined ? {} : { sloExcess }) });

describe("EcoFreq bounds around a planned clock", () => {
  it("reach down to the lowest clock that meets the SLO at any load, not only at the planned one", () => {
    // Planned at 1590 MHz for 2 req/s; 990 MHz meets the SLO only at 0.5 req/s.
    const options = [option(990, 0.5), option(1200, 1.2), option(1590, 2), option(1980, 2.6)];
    expect(ecoFreqBounds(options, 1590)).toEqual({ mode: "policy", policy: "ecofreq", minMhz: 990, maxMhz: 1590 });
  });

  it("never go above the planned clock, whose power the plan budgeted", () => {
    expect(ecoFreqBounds([option(1980, 3)], 1395)).toEqual({ mode: "policy", policy: "ecofreq", minMhz: 1395, maxMhz: 1395 });
  });

  it("leave out points past the SLO (a fallback plan's), so the floor meets it", () => {
    expect(ecoFreqBounds([option(810, 0.2, 0.4), option(1200, 1)], 1590)).toMatchObject({ minMhz: 1200 });
  });
});
