import { emptyGraph } from "../../src/core/planning/clover/config-graph.ts";
import { score, type CloverProblem, type Evaluation } from "../../src/core/planning/clover/evaluation.ts";
import { MIG_SLICES } from "../../src/core/planning/clover/mig.ts";
import { mixtureQuantile, type Measurement } from "../../src/core/planning/clover/service-model.ts";
import { slicePerformance } from "../../src/core/planning/clover/slice-performance.ts";
import { GreenferenceConfig, greenferencePlanner } from "../../src/core/planning/greenference/greenference-planner.ts";
import { PlanningInput } from "../../src/core/planning/planning-input.ts";
import { SERVER_POWER_OVERHEAD } from "../../src/core/model/power.ts";
import type { LpSolver } from "../../src/core/ports/lp-solver.ts";
import type { Plan } from "../../src/core/schemas/plan.ts";
import type { ProfileRow } from "../../src/core/schemas/profile.ts";
import type { ClassId } from "../../src/core/schemas/ids.ts";

const CLASS = "clover" as ClassId;
const MODEL = "qwen2.5";
/** The whole GPU (7g.80gb): the combined planner places instances on whole GPUs (TP >= 1), not on MIG slices. */
const WHOLE_GPU = MIG_SLICES[MIG_SLICES.length - 1]!;
/** Load levels of the profile, as fractions of an instance's capacity at its clock. */
const LOAD_FRACTIONS = [0.25, 0.5, 0.7, 0.85, 0.95] as const;
/** Clocks of the profile: four from 800 MHz to the top, on the GPU's clock step. */
const CLOCK_COUNT = 4;

/**
 * The combined policy's profile on Clover's scenario, from Clover's own service model (so both are
 * measured alike): every variant on a whole GPU at TP 1, `CLOCK_COUNT` clocks and `LOAD_FRACTIONS`
 * of its capacity there. E2E is the request alone plus the M/M/1-like wait `measure` uses; the
 * model has no separate TTFT and TBT, so TTFT is read as the E2E (an upper bound) and TBT as the
 * per-token share of the latency alone. Power is idle plus the load's share of the busy increment.
 *
 * @example
 * const rows = cloverCombinedProfile(problem); // 3 variants x 4 clocks x 5 loads
 */
export function cloverCombinedProfile(problem: CloverProblem): ProfileRow[] {
  const { service } = problem;
  const gpu = service.gpu;
  const step = (gpu.maxMhz - 800) / (CLOCK_COUNT - 1);
  const clocks = Array.from({ length: CLOCK_COUNT }, (_, i) => Math.round((800 + i * step) / gpu.clockStepMhz) * gpu.clockStepMhz);
  return service.variants.flatMap((v) =>
    clocks.flatMap((mhz) => {
      const p = slicePerformance(v.llm, gpu, WHOLE_GPU, service.shape, mhz);
      if (!p) return [];
      return LOAD_FRACTIONS.map((rho): ProfileRow => {
        const loadRps = rho * p.capacityRps;
        const e2eMs = (q: number) => (p.latencyS + Math.log(1 / (1 - q)) / (p.capacityRps * (1 - rho))) * 1e3;
        const avgPowerW = p.idlePowerW + rho * (p.busyPowerW - p.idlePowerW);
        const e2e = { p50: e2eMs(0.5), p99: e2eMs(0.99) };
        const tbt = (p.latencyS * 1e3) / service.shape.outputTokens;
        return { model: MODEL, variant: v.variant.id, gpu: gpu.type, tp: 1, mhz, classId: CLASS, loadRps, ttftMs: e2e, tbtMs: { p50: tbt, p99: tbt }, e2eMs: e2e, peakPowerW: p.busyPowerW, avgPowerW, energyPerRequestJ: avgPowerW / loadRps, stable: true };
      });
    }),
  );
}

/**
 * Clover's objective (Eq. 3) as the combined policy's weights. Per request, maximising f is
 * minimising λ x 100 E ci / C_base + (1 - λ) x 100 (A_base - A) / A_base; the planner prices
 * w.carbon x (wall gCO2 = 1.82 x GPU gCO2) + w.accuracy x quality lost, and A_base is the best
 * variant's quality, so w.carbon = 100 λ / (1.82 C_base) and w.accuracy = 100 (1 - λ) / A_base.
 */
export function cloverWeights(problem: CloverProblem): { carbon: number; energy: number; latency: number; accuracy: number } {
  const { lambda, baseline } = problem;
  return { carbon: (100 * lambda) / (SERVER_POWER_OVERHEAD * baseline.carbonPerRequest), energy: 0, latency: 0, accuracy: (100 * (1 - lambda)) / baseline.accuracy };
}

/** One hour of Clover's scenario as the combined planner's input: one site with the service's GPUs at the hour's intensity, one class with Clover's load and SLA. */
export function cloverCombinedInput(problem: CloverProblem, profile: readonly ProfileRow[], ci: number, hour: number): PlanningInput {
  const { service } = problem;
  const slaMs = problem.slaS * 1e3;
  return PlanningInput.parse({
    version: hour,
    nowMs: hour * 3600e3,
    horizonMs: 3600e3,
    model: MODEL,
    variants: service.variants.map((v) => ({ id: v.variant.id, quality: v.variant.quality })),
    sites: [{ id: "clover", gpus: [{ type: service.gpu.type, count: service.gpus }], powerW: 1e12, carbonGPerKwh: ci }],
    // Clover's SLA is BASE's p95 E2E; the planner checks the p99 of each instance against it (stricter).
    classes: [{ id: CLASS, inputBin: 0, outputBin: 0, slo: { ttftMs: slaMs, tbtMs: slaMs, e2eMs: slaMs }, demandRps: service.arrivalRps }],
    profile,
  });
}

/**
 * Measures a combined plan on Clover's service model: each replica a whole GPU at its locked clock
 * serving its planned load (the planner's weighted routing, not Clover's FIFO share), accuracy
 * weighted by requests, energy of all its GPUs per request, p95 of the mixture; load the plan
 * leaves unserved makes the p95 infinite (the SLA is missed). Scored with Clover's f at `ci`.
 */
export function scoreCombinedPlan(problem: CloverProblem, plan: Plan, ci: number): Evaluation {
  const { service } = problem;
  const graph = emptyGraph(service.variants.length);
  const parts: { load: number; quality: number; latencyS: number; rate: number; powerW: number }[] = [];
  for (const inst of plan.sites.flatMap((s) => s.instances)) {
    const v = service.variants.findIndex((x) => x.variant.id === inst.variant);
    const mhz = inst.clock.mode === "locked" ? inst.clock.mhz : inst.clock.maxMhz;
    const p = v < 0 ? undefined : slicePerformance(service.variants[v]!.llm, service.gpu, WHOLE_GPU, service.shape, mhz);
    if (!p) throw new Error(`combined plan: variant ${inst.variant} does not fit a whole ${service.gpu.type}`);
    graph[v]![MIG_SLICES.length - 1]! += inst.replicas;
    const load = (inst.loadRps[CLASS] ?? 0) / inst.replicas;
    const rho = load / p.capacityRps;
    for (let r = 0; r < inst.replicas; r++) parts.push({ load, quality: service.variants[v]!.variant.quality, latencyS: p.latencyS, rate: p.capacityRps * (1 - rho), powerW: p.idlePowerW + Math.min(1, rho) * (p.busyPowerW - p.idlePowerW) });
  }
  const served = parts.reduce((sum, x) => sum + x.load, 0);
  const serving = parts.filter((x) => x.load > 0);
  const unstable = serving.some((x) => !(x.rate > 0));
  const measurement: Measurement = {
    accuracy: serving.reduce((sum, x) => sum + x.load * x.quality, 0) / Math.max(served, 1e-12),
    energyJPerRequest: parts.reduce((sum, x) => sum + x.powerW, 0) / service.arrivalRps,
    p95S: unstable || served < service.arrivalRps * (1 - 1e-6) ? Infinity : mixtureQuantile(serving.map((x) => ({ share: x.load / served, latencyS: x.latencyS, rate: x.rate })), 0.95),
  };
  return score(problem, graph, measurement, ci);
}

/**
 * The combined policy over Clover's trace: planned afresh every hour (it has no carbon trigger)
 * with Clover's f as its weights, at locked clocks (EcoFreq's per-iteration control is outside
 * Clover's service model), each hour's plan scored on Clover's model at that hour's intensity.
 *
 * @example
 * const hourly = runCombinedOnClover(problem, intensities, javascriptLpSolver());
 */
export function runCombinedOnClover(problem: CloverProblem, intensities: readonly number[], solver: LpSolver): Evaluation[] {
  const profile = cloverCombinedProfile(problem);
  const planner = greenferencePlanner(GreenferenceConfig.parse({ kind: "greenference", weights: cloverWeights(problem), clock: "locked" }));
  return intensities.map((ci, h) => scoreCombinedPlan(problem, planner.plan(cloverCombinedInput(problem, profile, ci, h), solver).plan, ci));
}
