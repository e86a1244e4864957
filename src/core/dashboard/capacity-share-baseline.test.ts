import { describe, expect, it } from "vitest";
import { fixtureFleet } from "../routing/routing.test-helper.ts";
import { Fleet } from "../schemas/fleet.ts";
import { capacityShareIntensity, withBaselineCarbon } from "./capacity-share-baseline.ts";
import { COUNTERS } from "./counter-series.ts";

/** Sites a (8 GPUs, 100 g fixed), b (8 GPUs, grid), c (4 GPUs, wind: its life-cycle intensity). */
function fleet(): Fleet {
  const base = fixtureFleet();
  const [a, b, c] = base.sites;
  return Fleet.parse({
    ...base,
    sites: [
      a,
      { ...b, power: { kind: "grid", region: "DE" }, carbon: { kind: "electricitymaps", zone: "DE" } },
      { ...c, gpus: [{ type: "A100-80GB", count: 4 }], power: { kind: "wind", series: { kind: "forecast", forecastId: "w" }, peakMw: 1, rightSizingPercentile: 10, lifecycleGPerKwh: 11 }, carbon: { kind: "electricitymaps", zone: "NL" } },
    ],
  });
}

describe("capacity-share baseline", () => {
  it("weighs each site's routing intensity by its GPUs", () => {
    expect(capacityShareIntensity(fleet(), new Map([["b", 300]]))).toBeCloseTo((8 * 100 + 8 * 300 + 4 * 11) / 20);
  });

  it("adds the baseline's carbon for the energy in a batch of counter deltas, and nothing else", () => {
    const deltas = { [`${COUNTERS.energyJ}{site="a"}`]: 1.8e6, [`${COUNTERS.energyJ}{site="c"}`]: 1.8e6, [`${COUNTERS.carbonG}{site="a"}`]: 50, other_total: 4 };
    const out = withBaselineCarbon(deltas, fleet(), new Map([["b", 300]]));
    expect(out[COUNTERS.baselineCarbonG]).toBeCloseTo(capacityShareIntensity(fleet(), new Map([["b", 300]])));
    expect({ ...out, [COUNTERS.baselineCarbonG]: undefined }).toEqual({ ...deltas, [COUNTERS.baselineCarbonG]: undefined });
    expect(withBaselineCarbon(deltas, null, new Map())).toBe(deltas);
    expect(withBaselineCarbon({ other_total: 1 }, fleet(), new Map())).toEqual({ other_total: 1 });
  });
});
