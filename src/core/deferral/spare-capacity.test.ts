import { describe, expect, it } from "vitest";
import { gpuSpec } from "../model/gpu-specs.ts";
import { PlannedInstance, type SitePlan } from "../schemas/plan.ts";
import type { ProfileRow } from "../schemas/profile.ts";
import { spareCapacity } from "./spare-capacity.ts";

const gpu = gpuSpec("H100-80GB"); // idle 75 W, TDP 700 W
const lat = { p50: 1, p99: 1 };
const row = (tp: number, mhz: number, loadRps: number, peakPowerW: number, stable = true): ProfileRow =>
  ({ model: "m", variant: "base", gpu: "H100-80GB", tp, mhz, classId: "MM", loadRps, ttftMs: lat, tbtMs: lat, e2eMs: lat, peakPowerW, avgPowerW: peakPowerW, energyPerRequestJ: 1, stable }) as ProfileRow;
const instance = (id: string, tp: number, replicas: number, clock: PlannedInstance["clock"]) =>
  PlannedInstance.parse({ id, model: "m", variant: "base", tp, replicas, gpus: Array.from({ length: tp * replicas }, (_, i) => i), clock, loadRps: { MM: 0.1 } });

describe("spareCapacity", () => {
  const profile = [row(2, 1200, 1, 900), row(2, 1200, 2, 1100), row(2, 1200, 3, 1400, false), row(2, 1600, 2, 1300)];

  it("keeps interactive instances' flat-out draw whatever load they planned, and counts free GPUs at idle", () => {
    // One TP2 replica locked at 1100 MHz reads the 1200 MHz points (lowest not below): 1100 W flat out (the unstable 1400 W point does not count).
    const site = { site: "s", powerCapW: 1e5, instances: [instance("i", 2, 1, { mode: "locked", mhz: 1100 })] } as SitePlan;
    const spare = spareCapacity(site, { gpus: 8, availableW: 5000, gpu, profile, batchTp: 4, overhead: 2 });
    expect(spare).toEqual({ heldGpus: 2, reservedW: 2200, spareGpus: 4, spareW: 5000 - 2200 - 6 * 75 * 2 });
  });

  it("reads a clock policy at its upper bound, falls back to TDP where the profile has no point, and never goes below zero", () => {
    const site = {
      site: "s",
      powerCapW: 1e5,
      instances: [instance("a", 2, 2, { mode: "policy", policy: "ecofreq", minMhz: 800, maxMhz: 1500 }), instance("b", 4, 1, { mode: "locked", mhz: 1200 })],
    } as SitePlan;
    const spare = spareCapacity(site, { gpus: 8, availableW: 20_000, gpu, profile, batchTp: 2, overhead: 1 });
    expect(spare).toEqual({ heldGpus: 8, reservedW: 2 * 1300 + 4 * 700, spareGpus: 0, spareW: 20_000 - 5400 });
    expect(spareCapacity(site, { gpus: 8, availableW: 1000, gpu, profile, batchTp: 2, overhead: 1 }).spareW).toBe(0);
  });

  it("keeps the GPUs and flat-out power of entries the plan removes or re-shards while they hand over, but not of entries it keeps", () => {
    const kept = instance("kept", 2, 1, { mode: "locked", mhz: 1200 });
    const previous = { site: "s", powerCapW: 1e5, instances: [kept, instance("gone", 2, 1, { mode: "locked", mhz: 1200 }), instance("resharded", 2, 1, { mode: "locked", mhz: 1200 })] } as SitePlan;
    const next = { site: "s", powerCapW: 1e5, instances: [kept, { ...instance("resharded", 4, 1, { mode: "locked", mhz: 1200 }) }] } as SitePlan;
    const o = { gpus: 8, availableW: 20_000, gpu, profile, batchTp: 2, overhead: 1 };
    expect(spareCapacity(next, o)).toMatchObject({ heldGpus: 6, spareGpus: 2 });
    const during = spareCapacity(next, { ...o, previous });
    // kept 2 + resharded TP4 4 + handing over: gone 2 and the old TP2 resharded 2 = 10, capped at the site's 8.
    expect(during).toEqual({ heldGpus: 8, reservedW: 1100 + 4 * 700 + 1100 + 1100, spareGpus: 0, spareW: 20_000 - 6100 });
  });

  it("leaves a site without a plan all its GPUs and its power above idle", () => {
    expect(spareCapacity(undefined, { gpus: 8, availableW: 10_000, gpu, profile, batchTp: 2, overhead: 1.82 })).toEqual({ heldGpus: 0, reservedW: 0, spareGpus: 8, spareW: 10_000 - 8 * 75 * 1.82 });
  });
});
