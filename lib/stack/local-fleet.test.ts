import { describe, expect, it } from "vitest";
import { gpuSpec } from "../../src/core/model/gpu-specs.ts";
import { SERVER_POWER_OVERHEAD } from "../../src/core/model/power.ts";
import { stackSitePowerW, localFleet, windScaling } from "./local-fleet.ts";
import { StackConfig } from "./stack-config.ts";

const config = StackConfig.parse({});
const wind = config.sites[0] as Extract<(typeof config.sites)[number], { kind: "wind" }>;
// Generation 1..100 MW: the 20th percentile (linear) is 20.8 MW.
const series = { unit: "MW", epochMs: Array.from({ length: 100 }, (_, i) => i * 3_600_000), values: Array.from({ length: 100 }, (_, i) => i + 1), filled: 0 };

describe("the local stack's fleet", () => {
  it("right-sizes a wind site: at the chosen percentile of generation every GPU runs at TDP with server overhead", () => {
    const full = stackSitePowerW(config, wind);
    expect(full).toBeCloseTo(wind.gpus * gpuSpec(config.gpuType).tdpW * SERVER_POWER_OVERHEAD, 6);
    const s = windScaling(config, wind, series);
    expect(20.8 * s.wattsPerMw).toBeCloseTo(full, 6);
    expect(s.peakW).toBeCloseTo(100 * s.wattsPerMw, 6);
  });

  it("is a valid fleet with every site at its ingress, wind sites on forecasts and the grid site on the carbon provider", () => {
    const urls = Object.fromEntries(config.sites.map((s, i) => [s.id, `http://127.0.0.1:${9000 + i}`]));
    const fleet = localFleet(config, urls, { "wind-bpat": 1e6, "wind-erco": 2e6 });
    expect(fleet.sites.map((s) => [s.id, s.ingressUrl, s.power.kind, s.carbon.kind])).toEqual([
      ["wind-bpat", "http://127.0.0.1:9000", "wind", "fixed"],
      ["wind-erco", "http://127.0.0.1:9001", "wind", "fixed"],
      ["grid-ciso", "http://127.0.0.1:9002", "grid", "electricitymaps"],
    ]);
    expect(fleet.classes.map((c) => c.id)).toEqual(["SS", "SM", "SL", "MS", "MM", "ML", "LS", "LM", "LL"]);
    // Longer prompts get looser TTFT SLOs; TBT does not depend on the input bin much.
    const ttft = (id: string) => fleet.classes.find((c) => c.id === id)!.slo.ttftMs;
    expect(ttft("SS")).toBeLessThan(ttft("MS"));
    expect(ttft("MS")).toBeLessThan(ttft("LS"));
    expect(fleet.policy.kind).toBe("greenference");
  });
});
