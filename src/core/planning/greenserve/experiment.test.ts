import { describe, expect, it } from "vitest";
import { forkRng, seededRng } from "../../ports/rng.ts";
import { poissonRequests } from "../../profiling/steady-load.ts";
import { lmsysLikeLengths } from "../../workload/length-generators.ts";
import { greenServeExperiment, greenServeOnRequests } from "./experiment.ts";

describe("greenServeExperiment (2P2D A100, Llama-3.1-8B, ShareGPT-like, SLO 600/60 ms)", () => {
  const low = greenServeExperiment({ rateRps: 3, requests: 400, seed: 11 });

  it("at a low rate GreenServe uses much less energy than static 1410 MHz with the same ITL attainment", () => {
    expect(low.greenserve.energyJ).toBeLessThan(0.8 * low.staticMax.energyJ);
    expect(low.greenserve.itlAttainment).toBeGreaterThanOrEqual(low.staticMax.itlAttainment - 0.01);
    expect(low.greenserve.ttftAttainment).toBeGreaterThanOrEqual(low.staticMax.ttftAttainment - 0.01);
    // Fig. 18: at low rates both phases sit at the low frequency almost all the time.
    expect(low.greenserve.lowestFreqShare!.prefill).toBeGreaterThan(0.95);
    expect(low.greenserve.lowestFreqShare!.decode).toBeGreaterThan(0.95);
    expect(low.greenserve.onlineSamples).toBeGreaterThan(1000);
  });

  it("costs about what the static sweet spot costs, and every system serves the same requests", () => {
    expect(low.greenserve.energyJ / low.staticSweetSpot.energyJ).toBeGreaterThan(0.95);
    expect(low.greenserve.energyJ / low.staticSweetSpot.energyJ).toBeLessThan(1.05);
    expect(low.staticMax.prefillEnergyJ + low.staticMax.decodeEnergyJ).toBeCloseTo(low.staticMax.energyJ, 3);
    expect(low.greenserve.routeRules!["1a"]).toBeGreaterThan(0);
  });

  it("Greenference's site loop packs decode onto one instance at a low rate: less decode energy, the same attainment", () => {
    const packed = low.greenferenceSite;
    // Both decode instances are idle-heavy at 3 req/s: packing leaves one idle at idle power.
    expect(packed.decodeEnergyJ).toBeLessThan(0.9 * low.greenserve.decodeEnergyJ);
    expect(packed.prefillEnergyJ).toBeCloseTo(low.greenserve.prefillEnergyJ, -2);
    expect(packed.sloAttainment).toBeGreaterThanOrEqual(low.greenserve.sloAttainment);
    expect(packed.meanItlMs).toBeGreaterThan(low.greenserve.meanItlMs);
  });

  it("refuses frequencies below the sweet spot", () => {
    expect(() => greenServeExperiment({ rateRps: 1, requests: 10, seed: 1, freqsMhz: [810, 1410] })).toThrow(/sweet spot/);
  });

  it("is deterministic for a seed", () => {
    const again = greenServeExperiment({ rateRps: 3, requests: 100, seed: 5 });
    expect(greenServeExperiment({ rateRps: 3, requests: 100, seed: 5 })).toEqual(again);
  });

  it("runs a given workload as the rate-driven experiment runs its own", () => {
    const requests = poissonRequests(forkRng(seededRng(9), 1), 4, 120, lmsysLikeLengths());
    expect(greenServeOnRequests(requests, { seed: 9 })).toEqual(greenServeExperiment({ rateRps: 4, requests: 120, seed: 9, dataset: "lmsys" }));
  });
});
