import { describe, expect, it } from "vitest";
import { gpuSpecs } from "../model/gpu-specs.ts";
import { SERVER_POWER_OVERHEAD } from "../model/power.ts";
import { SitePlan } from "../schemas/plan.ts";
import { row } from "./planning.test-helper.ts";
import { sitePowerAtCeilingW } from "./plan-power.ts";

const rows = [1200, 1410].flatMap((mhz) => [1, 3].map((loadRps) => row({ classId: "SS", gpu: "A100-80GB", tp: 1, mhz, loadRps, e2eMs: 500, peakPowerW: mhz === 1410 ? 300 + 100 * loadRps : 150 + 50 * loadRps })));
const gpus = [{ type: "A100-80GB" as const, count: 4 }];

describe("a site's power at the ceiling clocks", () => {
  it("prices a policy clock at its upper bound and a MIG slice at its share of TDP, and lists what it cannot price", () => {
    const site = SitePlan.parse({
      site: "a",
      powerCapW: 1e4,
      instances: [
        { id: "eco", model: "m", variant: "base", tp: 1, replicas: 2, gpus: [0, 1], clock: { mode: "policy", policy: "ecofreq", minMhz: 1200, maxMhz: 1410 }, loadRps: { SS: 4 } },
        { id: "sliced", model: "m", variant: "base", tp: 1, replicas: 2, gpus: [2, 2], clock: { mode: "locked", mhz: 1410 }, mig: "3g.40gb" },
      ],
    });
    const { watts, unpriced } = sitePowerAtCeilingW(site, gpus, rows);
    // eco: 2 replicas at 2 req/s each on the 1410 MHz curve (500 W), x1.82; sliced: 2 x 3/7 of an A100's 400 W, x1.82.
    expect(unpriced).toEqual([]);
    expect(watts).toBeCloseTo(2 * 500 * SERVER_POWER_OVERHEAD + (2 * 3 * gpuSpecs["A100-80GB"].tdpW * SERVER_POWER_OVERHEAD) / 7, 9);
    const lockedAtUnprofiled = SitePlan.parse({ ...site, instances: [{ ...site.instances[0]!, clock: { mode: "locked", mhz: 1590 } }] });
    expect(sitePowerAtCeilingW(lockedAtUnprofiled, gpus, rows).unpriced).toEqual(["eco: no profile rows for m/base TP1 at 1590 MHz on A100-80GB"]);
  });
});
