import { describe, expect, it } from "vitest";
import { gpuSpecs } from "../../model/gpu-specs.ts";
import { seededRng } from "../../ports/rng.ts";
import { cloverAnneal, type SearchResult } from "./annealing.ts";
import { bloverSearch, oracleAt, oracleProfile, oracleSearch } from "./baselines.ts";
import { graphKey, type ConfigGraph } from "./config-graph.ts";
import { carbonTriggered, CloverController } from "./controller.ts";
import { better, cloverProblem, evaluate, type CloverProblem } from "./evaluation.ts";
import { annealingEnergy, cloverF, deltaAccuracy, deltaCarbon } from "./objective.ts";
import { baseGraph, cloverService } from "./service-model.ts";
import { QWEN25_FAMILY } from "./variants.ts";

/** A small service: the Qwen2.5 family on two A100s, BASE at 70% utilisation, λ = 0.5. */
function smallProblem(): CloverProblem {
  const service = cloverService({ variants: QWEN25_FAMILY, gpu: gpuSpecs["A100-80GB"], gpus: 2, shape: { inputTokens: 512, outputTokens: 128 }, baseUtilisation: 0.7 });
  return cloverProblem(service, { lambda: 0.5, baseCi: 250 });
}

/** A carbon trace over a day-like swing (gCO2/kWh). */
const TRACE = [250, 300, 360, 420, 480, 420, 360, 300, 250, 200, 160, 120, 100, 120, 160, 200, 250, 300];

describe("Clover objective (Eqs. 1-3) and annealing energy (Eq. 6)", () => {
  const base = { accuracy: 1, carbonPerRequest: 1000 };
  const f = (dAcc: number, carbon: number) => cloverF(dAcc, deltaCarbon(carbon, base), 0.1);

  it("reproduces Fig. 6 (λ = 0.1, C_base = 1000): A at ci = 500, B at ci = 100; row B at ci = 500 is 2.2", () => {
    expect(f(-4, 0.4 * 500)).toBeCloseTo(4.4);
    expect(f(-2, 1.2 * 500)).toBeCloseTo(2.2);
    expect(f(-4, 0.4 * 100)).toBeCloseTo(6.0);
    expect(f(-2, 1.2 * 100)).toBeCloseTo(7.0);
    expect(deltaAccuracy(0.96, { accuracy: 1, carbonPerRequest: 1 })).toBeCloseTo(-4);
  });

  it("never rewards an SLA violation, whatever the sign of f", () => {
    expect(annealingEnergy(4, 1, 1)).toBe(-4);
    expect(annealingEnergy(4, 2, 1)).toBe(-2);
    expect(annealingEnergy(-4, 1, 1)).toBe(4);
    expect(annealingEnergy(-4, 2, 1)).toBe(8); // the unguarded product would give 2, better than meeting the SLA
    expect(annealingEnergy(-4, Infinity, 1)).toBe(Infinity);
    for (const fv of [-10, -0.5, 0, 0.5, 10]) expect(annealingEnergy(fv, 3, 1)).toBeGreaterThanOrEqual(annealingEnergy(fv, 1, 1));
  });
});

describe("Clover simulated annealing", () => {
  const problem = smallProblem();
  const base = baseGraph(problem.service);

  it("scores BASE at ΔAccuracy 0, meeting its own SLA", () => {
    const e = evaluate(problem, base, 250);
    expect(e.dAccuracy).toBeCloseTo(0);
    expect(e.dCarbon).toBeCloseTo(0);
    expect(e.slaMet).toBe(true);
  });

  it("is reproducible for a seed and stops after 5 evaluations without a new best", () => {
    const run = (seed: number) => cloverAnneal(problem, base, 250, { rng: seededRng(seed) });
    const a = run(11);
    const b = run(11);
    expect(a.trace.map((e) => graphKey(e.graph))).toEqual(b.trace.map((e) => graphKey(e.graph)));
    expect(run(12).trace.map((e) => graphKey(e.graph))).not.toEqual(a.trace.map((e) => graphKey(e.graph)));
    let best = a.start;
    let lastImprovement = 0;
    a.trace.forEach((e, i) => {
      if (better(e, best)) [best, lastImprovement] = [e, i + 1];
    });
    expect(a.evaluations - lastImprovement).toBe(5);
    expect(graphKey(a.best.graph)).toBe(graphKey(best.graph));
  });

  it("stops at the evaluation cap and at the time limit", () => {
    expect(cloverAnneal(problem, base, 250, { rng: seededRng(1), patience: 1000, maxEvaluations: 7 }).evaluations).toBe(7);
    let t = 0;
    const clock = { now: () => (t += 60_000) }; // each check is a minute later: measuring takes time
    const run = cloverAnneal(problem, base, 250, { rng: seededRng(1), patience: 1000, clock, timeLimitMs: 5 * 60_000 });
    expect(run.evaluations).toBeLessThanOrEqual(5);
  });

  it("tracks a carbon trace within a few % of ORACLE, closer than BLOVER", () => {
    const oracle = new Map(TRACE.map((ci) => [ci, oracleSearch(problem, ci)]));
    expect(oracle.get(250)!.evaluations).toBeGreaterThan(1000);
    const ratios = { clover: [] as number[], blover: [] as number[] };
    for (let seed = 1; seed <= 6; seed++) {
      for (const [name, search] of [["clover", cloverAnneal], ["blover", bloverSearch]] as const) {
        let current: ConfigGraph = base;
        const rng = seededRng(seed);
        TRACE.forEach((ci, k) => {
          const run: SearchResult = search(problem, current, ci, { rng });
          current = run.best.graph;
          expect(run.best.slaMet).toBe(true);
          if (k > 0) ratios[name].push(run.best.f / oracle.get(ci)!.best.f);
        });
      }
    }
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    expect(mean(ratios.clover)).toBeGreaterThan(0.95);
    expect(mean(ratios.clover)).toBeGreaterThan(mean(ratios.blover));
    expect(Math.max(...ratios.clover)).toBeLessThanOrEqual(1 + 1e-9);
  });

  it("profiles ORACLE once and scores it per intensity with the same result as a fresh search", () => {
    const profile = oracleProfile(problem);
    for (const ci of [100, 480]) {
      const fresh = oracleSearch(problem, ci);
      const reused = oracleAt(problem, profile, ci);
      expect(reused.evaluations).toBe(profile.length);
      expect(graphKey(reused.best.graph)).toBe(graphKey(fresh.best.graph));
      expect(reused.best.f).toBe(fresh.best.f);
    }
    // The intensity matters: a cleaner grid makes carbon cheaper, so ORACLE keeps more accuracy.
    expect(oracleAt(problem, profile, 100).best.dAccuracy).toBeGreaterThan(oracleAt(problem, profile, 480).best.dAccuracy);
  });

  it("needs fewer evaluations than BLOVER to come within 5% of ORACLE along the trace", () => {
    const target = new Map(TRACE.map((ci) => [ci, 0.95 * oracleSearch(problem, ci).best.f]));
    const cost = { clover: 0, blover: 0 };
    for (let seed = 1; seed <= 4; seed++) {
      for (const [name, search] of [["clover", cloverAnneal], ["blover", bloverSearch]] as const) {
        let current: ConfigGraph = base;
        const rng = seededRng(100 + seed);
        for (const ci of TRACE) {
          const goal = target.get(ci)!;
          const start = evaluate(problem, current, ci);
          if (start.slaMet && start.f >= goal) continue;
          const run = search(problem, current, ci, { rng, patience: Infinity, maxEvaluations: 300 });
          const hit = run.trace.findIndex((e) => e.slaMet && e.f >= goal);
          cost[name] += hit < 0 ? 300 : hit + 1;
          current = (hit < 0 ? run.best : run.trace[hit]!).graph;
        }
      }
    }
    expect(cost.clover).toBeLessThan(cost.blover / 2);
  });
});

describe("Clover's carbon trigger and warm start", () => {
  it("re-optimises only when the intensity moves more than 5% from the last optimisation", () => {
    expect(carbonTriggered(100, undefined)).toBe(true);
    expect(carbonTriggered(105, 100)).toBe(false);
    expect(carbonTriggered(94.9, 100)).toBe(true);
    expect(carbonTriggered(105.1, 100)).toBe(true);
    const problem = smallProblem();
    const clover = new CloverController(problem, baseGraph(problem.service));
    const rng = seededRng(3);
    const first = clover.onCarbon(300, { rng })!;
    expect(graphKey(first.start.graph)).toBe(graphKey(baseGraph(problem.service)));
    expect(clover.onCarbon(310, { rng })).toBeUndefined(); // +3.3% of 300
    expect(clover.onCarbon(290, { rng })).toBeUndefined(); // drift is measured from 300, not from 310
    const second = clover.onCarbon(250, { rng })!;
    expect(graphKey(second.start.graph)).toBe(graphKey(first.best.graph)); // warm start
    expect(clover.ciAtLastOptimisation).toBe(250);
    expect(graphKey(clover.current)).toBe(graphKey(second.best.graph));
  });

  it("stops BLOVER after 5 of its own samples without a new best, and keeps the configuration in force when none beats it", () => {
    const problem = smallProblem();
    for (let seed = 1; seed <= 5; seed++) {
      const start = evaluate(problem, baseGraph(problem.service), 300);
      const run = bloverSearch(problem, start.graph, 300, { rng: seededRng(seed) });
      let best = run.trace[0]!;
      let lastBest = 0;
      run.trace.forEach((e, i) => {
        if (better(e, best)) [best, lastBest] = [e, i];
      });
      // Random search has no starting point: its first sample is its first best, and it ends 5 samples after its last.
      expect(run.evaluations).toBe(lastBest + 1 + 5);
      expect(graphKey(run.best.graph)).toBe(graphKey(better(best, start) ? best.graph : start.graph));
    }
  });

  it("runs BLOVER's random search under the same trigger when given it", () => {
    const problem = smallProblem();
    const blover = new CloverController(problem, baseGraph(problem.service), 0.05, bloverSearch);
    const rng = seededRng(4);
    const first = blover.onCarbon(300, { rng })!;
    const alone = bloverSearch(problem, baseGraph(problem.service), 300, { rng: seededRng(4) });
    expect(first.trace.map((e) => graphKey(e.graph))).toEqual(alone.trace.map((e) => graphKey(e.graph)));
    expect(blover.onCarbon(310, { rng })).toBeUndefined();
    expect(graphKey(blover.current)).toBe(graphKey(first.best.graph));
  });
});
