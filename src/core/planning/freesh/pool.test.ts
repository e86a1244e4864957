import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { loadFreesh } from "../../../../host-agent/data/read-data-file.ts";
import { javascriptLpSolver } from "../../../solver/javascript-lp-solver.ts";
import { usableConfigs } from "./config-filter.ts";
import { freeshEpisodeInput, type FreeshData } from "./pool-from-data.ts";
import { FreeshPoolInput } from "./pool-input.ts";
import { buildPoolModel } from "./pool-model.ts";
import { solveFreeshPool, solveMinEnergy, type FreeshPoolResult } from "./pool-solve.ts";

const solver = javascriptLpSolver();
let data: FreeshData;
beforeAll(async () => {
  data = await loadFreesh(join(process.cwd(), "data/freesh"));
});

/** GPUs used never exceed a site's count, and every type of the chosen partition gets α x its peak. */
function expectFeasible(input: FreeshPoolInput, r: FreeshPoolResult) {
  r.gpusUsed.forEach((used, n) => {
    for (const [kind, count] of Object.entries(used)) expect(count).toBeLessThanOrEqual(input.sites[n]!.gpus[kind] ?? 0);
  });
  r.peakDemandQps.forEach((d, t) => expect(r.capacityQps[t]!).toBeGreaterThanOrEqual(input.alpha * d - 1e-9));
  expect(r.shortfallQps.every((s) => s === 0)).toBe(true);
  expect(r.workers.every((w) => w.partition === r.partition && Number.isInteger(w.workers))).toBe(true);
}

/** Two sites, two partitions of two types, modes of 1 and 2 GPUs; partition "q" is the cheaper one here. */
const point = (maxQps: number, powerW: number) => ({ maxQps, powerW, latencyS: 1, tbtMs: 50, ttftMs: 100 });
const small = {
  types: ["s", "l"],
  modes: [{ name: "x1", gpus: { g: 1 } }, { name: "x2", gpus: { g: 2 } }],
  sites: [{ name: "n0", gpus: { g: 3 } }, { name: "n1", gpus: { g: 4 } }],
  partitions: [
    { name: "p", configs: [[point(2, 300), point(5, 500)], [point(1, 300), point(3, 550)]], demandQps: [[4, 2], [6, 1]], latencyToleranceS: [5, 5] },
    { name: "q", configs: [[point(3, 300), point(6, 500)], [point(1, 280), point(2, 520)]], demandQps: [[3, 1], [5, 2]], latencyToleranceS: [5, 5] },
  ],
  emissions: [[100, 120], [-20, 400]],
  stepHours: 1 / 12,
  slo: { tbtMs: [150, 150], ttftMs: [300, 600] },
};

describe("FREESH pool MILP: model", () => {
  it("filters configurations by (1e) and by what a site can host", () => {
    const input = FreeshPoolInput.parse(freeshEpisodeInput(data, { episode: 24 }));
    const configs = usableConfigs(input);
    const has = (site: number, partition: number, type: number, mode: number) => configs.some((c) => c.site === site && c.partition === partition && c.type === type && c.mode === mode);
    expect(has(1, 0, 1, 0)).toBe(false); // partition a, SL on A100x2: max QPS 0
    expect(has(1, 1, 2, 1)).toBe(false); // partition b, LS on A100x4: TTFT 616 ms > 600 ms
    expect(has(1, 1, 2, 0)).toBe(true);
    expect(has(0, 0, 0, 3)).toBe(true); // H100x4 only where 4 H100s are
    expect(has(1, 0, 0, 3)).toBe(false);
    const { model } = buildPoolModel(input);
    expect(Object.keys(model.variables).filter((v) => v.startsWith("x:"))).toHaveLength(configs.length);
    expect(model.constraints["pick"]).toEqual({ equal: 1 });
    expect(model.variables["q:1"]!["workers:1"]).toBeLessThan(0); // (1d): Σ x - M q <= 0
  });
});

describe("FREESH pool MILP on the real episodes 24 and 25 (the paper's E1, E2)", () => {
  for (const episode of [24, 25]) {
    it(`episode ${episode}: feasible under both objectives, carbon plan emits no more and energy plan uses no more`, () => {
      const carbonIn = FreeshPoolInput.parse(freeshEpisodeInput(data, { episode, objective: "carbon" }));
      const carbon = solveFreeshPool(carbonIn, solver);
      const energy = solveFreeshPool(freeshEpisodeInput(data, { episode, objective: "energy" }), solver);
      for (const r of [carbon, energy]) {
        expect(r.status).toBe("optimal");
        expectFeasible(carbonIn, r);
        expect(r.gap).toBeGreaterThanOrEqual(0);
      }
      expect(carbon.emissions).toBeLessThanOrEqual(energy.emissions + 1e-9);
      expect(energy.energyKwh).toBeLessThanOrEqual(carbon.energyKwh + 1e-9);
      if (episode === 24) {
        // Sites' rates differ in this episode: the two objectives pick different plans.
        expect(carbon.emissions).toBeLessThan(energy.emissions * 0.9);
        expect(energy.energyKwh).toBeLessThan(carbon.energyKwh);
      }
    });
  }

  it("with the same constant rate at every site, carbon is that rate x the energy optimum", () => {
    const flat = { ...small, emissions: small.emissions.map((row) => row.map(() => 800)) };
    const carbon = solveFreeshPool({ ...flat, objective: "carbon" }, solver);
    const energy = solveFreeshPool({ ...flat, objective: "energy" }, solver);
    expect(carbon.emissions).toBeCloseTo(800 * (energy.energyKwh / 1e3), 9);
    expect(carbon.objective).toBeCloseTo(800 * (energy.objective / 1e3), 9);
  });

  it("follows negative marginal emissions (episode 0: FREESH's Table 3 case)", () => {
    const carbon = solveFreeshPool(freeshEpisodeInput(data, { episode: 0, objective: "carbon" }), solver);
    const energy = solveFreeshPool(freeshEpisodeInput(data, { episode: 0, objective: "energy" }), solver);
    expect(carbon.emissions).toBeLessThan(0);
    expect(energy.emissions).toBeGreaterThan(0);
    expect(carbon.energyKwh).toBeGreaterThan(energy.energyKwh); // extra workers where emissions are negative
  });

  it("degrades when the GPUs cannot carry the demand: serves what it can, reports the shortfall", () => {
    const input = FreeshPoolInput.parse(freeshEpisodeInput(data, { episode: 24, beta: 0.25 }));
    const r = solveFreeshPool(input, solver);
    expect(r.status).toBe("optimal");
    expect(r.shortfallQps.some((s) => s > 0)).toBe(true);
    expect(r.unservedQps.reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
    r.gpusUsed.forEach((used, n) => Object.entries(used).forEach(([kind, count]) => expect(count).toBeLessThanOrEqual(input.sites[n]!.gpus[kind] ?? 0)));
  });
});

describe("FREESH pool MILP: partition choice", () => {
  it("gives the same optimum with the big-M model (1d) as with one model per partition", () => {
    for (const objective of ["carbon", "energy"] as const) {
      const joint = solveFreeshPool({ ...small, objective }, solver, { perPartition: false });
      const split = solveFreeshPool({ ...small, objective }, solver);
      expect(joint.objective).toBeCloseTo(split.objective, 9);
      expect(joint.partitionName).toBe(split.partitionName);
      expect(split.lpBound).toBeLessThanOrEqual(split.objective + 1e-9);
    }
  });

  it("switches off the demand of the partition not chosen", () => {
    const r = solveFreeshPool({ ...small, objective: "energy" }, solver);
    expect(r.workers.every((w) => w.partition === r.partition)).toBe(true);
    expect(r.unservedQps.every((u) => u === 0)).toBe(true);
  });
});

describe("FREESH's MinEnergy baseline", () => {
  it("keeps the least energy and, among the plans that tie on it, emits least", () => {
    // Every site has the same configurations, so energy alone cannot tell n0 (clean) from n1 (dirty).
    const tied = { ...small, emissions: [[50, 50], [300, 300]] };
    const plain = solveMinEnergy(tied, solver, { tieBreak: "solver" });
    const least = solveMinEnergy(tied, solver);
    const carbon = solveFreeshPool({ ...tied, objective: "carbon" }, solver);
    expect(least.energyKwh).toBeCloseTo(plain.energyKwh, 9);
    expect(least.emissions).toBeLessThan(plain.emissions); // this solver's own choice puts workers on n1
    expect(least.emissions).toBeCloseTo(carbon.emissions, 9); // here the carbon optimum uses no extra energy
    expectFeasible(FreeshPoolInput.parse(tied), least);
  });

  it("bounds the plan's energy when asked", () => {
    // n1's negative rate makes extra workers there pay: the carbon plan uses more energy.
    const negative = { ...small, emissions: [[100, 120], [-50, -50]] };
    const free = solveFreeshPool({ ...negative, objective: "carbon" }, solver);
    const energy = solveFreeshPool({ ...negative, objective: "energy" }, solver);
    expect(free.energyKwh).toBeGreaterThan(energy.energyKwh);
    const bounded = solveFreeshPool({ ...negative, objective: "carbon", maxEnergyKwh: energy.energyKwh }, solver);
    expect(bounded.energyKwh).toBeLessThanOrEqual(energy.energyKwh + 1e-9);
    expect(bounded.emissions).toBeGreaterThan(free.emissions);
    expect(solveMinEnergy(negative, solver).energyKwh).toBeCloseTo(energy.energyKwh, 9);
  });
});
