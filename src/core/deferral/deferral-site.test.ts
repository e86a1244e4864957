import { describe, expect, it } from "vitest";
import { gpuSpec } from "../model/gpu-specs.ts";
import { DeferralSite } from "../schemas/deferral.ts";
import type { ClassId, SiteId } from "../schemas/ids.ts";
import { PlannedInstance, type SitePlan } from "../schemas/plan.ts";
import type { BatchOperatingPoint } from "./batch-operating-point.ts";
import { deferralSite } from "./deferral-site.ts";

const gpu = gpuSpec("H100-80GB"); // idle 75 W, TDP 700 W (no profile rows: instances count at TDP)
const point: BatchOperatingPoint = { tp: 2, mhz: 1200, classes: { ["MM" as ClassId]: { capacityRps: 1, cost: { gpuSeconds: 2, energyJ: 500 } } }, mixEnergyJ: 500 };
const instance = (id: string, tp: number) => PlannedInstance.parse({ id, model: "m", variant: "base", tp, replicas: 1, gpus: Array.from({ length: tp }, (_, i) => i), clock: { mode: "locked", mhz: 1200 }, loadRps: { MM: 0.1 } });
const plan = (...instances: PlannedInstance[]) => ({ site: "w", powerCapW: 1e5, instances }) as SitePlan;
const base = { site: "w" as SiteId, gpus: 8, gpu, profile: [], point, overhead: 1, slotS: 900, startS: 90, carbonGPerKwh: [11, 11, 11], availableW: [10_000, 10_000, 3_000] };

describe("deferralSite", () => {
  it("gives the plan's spare GPUs less a batch instance's start-up, each slot's forecast power, and the handover in slot 0 only", () => {
    const out = deferralSite({ ...base, plan: plan(instance("a", 2)), previous: plan(instance("old", 2)) });
    expect(DeferralSite.parse(out)).toEqual(out);
    expect(out.spareGpus).toEqual([4 * 0.9, 6 * 0.9, 6 * 0.9]);
    // Slot 0: a and the handing-over old instance flat out (TDP) and 4 idle GPUs; later: a and 6 idle GPUs.
    expect(out.spareW).toEqual([10_000 - 1400 - 1400 - 4 * 75, 10_000 - 1400 - 6 * 75, 3_000 - 1400 - 6 * 75]);
    expect(out.costs).toEqual({ MM: { gpuSeconds: 2, energyJ: 500 } });
    expect(out.firmSpareGpus).toBeUndefined();
  });

  it("counts a site whose power may not come as firm in slot 0 only", () => {
    const out = deferralSite({ ...base, plan: undefined, firm: false });
    expect(out.firmSpareGpus).toEqual([8 * 0.9, 0, 0]);
    expect(out.firmSpareW).toEqual([10_000 - 600, 0, 0]);
  });

  it("refuses forecasts of different lengths", () => {
    expect(() => deferralSite({ ...base, plan: undefined, availableW: [1] })).toThrow(/3 slots, availableW 1/);
  });
});
