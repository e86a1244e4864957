import { z } from "zod";
import { SERVER_POWER_OVERHEAD } from "../../model/power.ts";
import type { LpSolver } from "../../ports/lp-solver.ts";
import { PolicyWeights } from "../../schemas/fleet.ts";
import { allocationsOf } from "../heron/allocations.ts";
import { instanceProblem, type InstanceProblem } from "../heron/instance-problem.ts";
import { solveInstances, type SolveInstancesOptions } from "../heron/instance-solve.ts";
import { operatingOptions, paretoOptions, type OptionSet } from "../operating-options.ts";
import { assemblePlan, type Allocation } from "../plan-assembly.ts";
import type { Planner, PlannerResult } from "../planner.ts";
import type { PlanningInput } from "../planning-input.ts";
import { ecoFreqBounds } from "./clock-bounds.ts";
import { greenferenceCost } from "./greenference-cost.ts";

/**
 * Default weights, per request served: 1 per gCO2, 0.01 per second of median E2E (10 s of latency
 * weigh as 0.1 g, about a quarter of what a Llama2-70B request costs on a 400 g/kWh grid), 10 per
 * unit of quality lost (a variant 0.05 worse weighs 0.5 g). A fleet's policy weights replace them.
 */
export const GREENFERENCE_DEFAULT_WEIGHTS = { carbon: 1, energy: 0, latency: 0.01, accuracy: 10 };

/** World average carbon intensity of electricity generation in 2022, gCO2/kWh (Ember, Global Electricity Review 2023). */
export const WORLD_AVERAGE_G_PER_KWH = 436;

/** The combined policy's planner (DESIGN section 7), run every Planner-L period. */
export const GreenferenceConfig = z.object({
  kind: z.literal("greenference"),
  weights: PolicyWeights.default(GREENFERENCE_DEFAULT_WEIGHTS),
  /** GPUs that may change per slot as a fraction of all GPUs, counted as Heron's R_L (`HeronPlannerLConfig`). */
  reconfigBudget: z.number().min(0).max(2).default(0.1),
  /** Intensity assumed for a site without one, gCO2/kWh (it is never counted cleaner than a site with a known intensity). */
  unknownCarbonGPerKwh: z.number().nonnegative().default(WORLD_AVERAGE_G_PER_KWH),
  /** "ecofreq": sites run iteration-level frequency control within bounds around the planned clock; "locked": the planned clock. */
  clock: z.enum(["ecofreq", "locked"]).default("ecofreq"),
});
export type GreenferenceConfig = z.infer<typeof GreenferenceConfig>;

/**
 * Greenference's combined planner: Heron's Planner-L model (per site and slot, instances of every
 * (GPU, class, TP, clock, load level) within each site's GPUs and forecast power envelope, one
 * (clock, load) per group, a reconfiguration budget, SLO-feasible points only, unserved load at a
 * penalty and reported as shortfall) with two more levers and another objective: the model
 * variant (every variant in `input.variants` is a group of its own) and a cost per instance of
 * weighted carbon (energy x the site's intensity: a wind site's is its life-cycle one), energy,
 * request-weighted latency and quality loss (`greenferenceCost`). Instances get EcoFreq bounds
 * around the planned clock (`ecoFreqBounds`), within which the site controls frequency per
 * iteration.
 *
 * @example
 * const { plan } = greenferencePlanner(GreenferenceConfig.parse({ kind: "greenference" })).plan(input, solver);
 */
export function greenferencePlanner(config: GreenferenceConfig, solve: SolveInstancesOptions = {}): Planner {
  return { plan: (input, solver) => planGreenference(input, solver, config, solve) };
}

function planGreenference(input: PlanningInput, solver: LpSolver, config: GreenferenceConfig, solve: SolveInstancesOptions): PlannerResult {
  const slos = Object.fromEntries(input.classes.map((c) => [c.id, c.slo]));
  const variants = input.variants ?? [{ id: input.variant, quality: 1 }];
  const bestQuality = Math.max(...variants.map((v) => v.quality));
  const offered = variants.map((v) => ({ qualityLoss: bestQuality - v.quality, sets: operatingOptions(input.profile, { model: input.model, variant: v.id, slos, objective: "min-energy" }) }));
  const { gPerKwh, assumed, unknownGPerKwh } = siteIntensities(input, config.unknownCarbonGPerKwh);
  const atIntensity = new Map<number, OptionSet[]>();
  const setsAt = (site: number): OptionSet[] => {
    const carbonGPerKwh = gPerKwh[site]!;
    let sets = atIntensity.get(carbonGPerKwh);
    if (!sets) {
      sets = offered.flatMap(({ qualityLoss, sets: raw }) =>
        raw.map((set) => ({ ...set, options: paretoOptions(set.options.map((o) => ({ ...o, cost: greenferenceCost(o, { carbonGPerKwh, qualityLoss }, config.weights) }))) })),
      );
      atIntensity.set(carbonGPerKwh, sets);
    }
    return sets;
  };
  const problem = servingFirst(instanceProblem(input, setsAt, { reconfigBudget: config.reconfigBudget }));
  const out = solveInstances(problem, solver, solve);
  const allOptions = (a: Allocation) => offered[variants.findIndex((v) => v.id === a.variant)]?.sets.find((s) => s.gpu === a.gpu && s.classId === a.classId && s.tp === a.tp)?.options ?? [];
  const allocations = allocationsOf(input, problem, out.choice).map((a) => (config.clock === "locked" ? a : { ...a, clock: ecoFreqBounds(allOptions(a), a.mhz, a.loadRps) }));
  let carbonGPerH = 0;
  problem.groups.forEach((g, gi) => {
    const o = g.options[out.choice.option[gi] ?? -1];
    if (o) carbonGPerH += ((out.choice.count[gi] ?? 0) * o.gpuPowerW * SERVER_POWER_OVERHEAD * gPerKwh[g.site]!) / 1000;
  });
  const budget = problem.reconfigBudgetGpus;
  const notes = [
    `greenference (carbon ${config.weights.carbon}, energy ${config.weights.energy}, latency ${config.weights.latency}, accuracy ${config.weights.accuracy}): ${out.method}, objective ${round(out.usage.objective)}, LP bound ${round(out.lpBound)}, gap ${round(out.gap)}`,
    `carbon at the planned load levels: ${round(carbonGPerH)} gCO2/h`,
    ...(assumed.length === 0 ? [] : [`no carbon intensity for ${assumed.join(", ")}: counted at ${round(unknownGPerKwh)} gCO2/kWh`]),
    ...(budget === undefined ? [] : [`reconfigured ${out.usage.reconfigGpus} GPUs (budget ${round(budget)})`]),
    ...out.notes,
  ];
  const plan = assemblePlan(input, allocations, { policy: "greenference", notes });
  const stats = { variables: out.variables, constraints: out.constraints, objective: out.usage.objective, lpBound: out.lpBound, gap: out.gap, method: out.method };
  return { plan, stats };
}

/**
 * The problem with unserved load priced at 100 x the dearest cost per req/s of any option (Heron's
 * penalty uses each class's cheapest, which a carbon-free site makes almost nothing: the planner
 * would then rather drop load than serve it on a grid site). Serving comes first, as DESIGN
 * section 6 asks; the reconfiguration penalty keeps its ratio to it.
 */
function servingFirst(p: InstanceProblem): InstanceProblem {
  const dearest = Math.max(0, ...p.groups.flatMap((g) => g.options.map((o) => o.cost / o.loadRps)).filter(Number.isFinite));
  if (!(dearest > 0)) return p;
  const unservedPenalty = 100 * dearest;
  return { ...p, unservedPenalty, reconfigPenalty: (p.reconfigPenalty * unservedPenalty) / p.unservedPenalty };
}

/**
 * Each site's carbon intensity for the slot; a site without one is counted at the highest of
 * `fallback` and every known intensity, so that not knowing never looks clean.
 */
function siteIntensities(input: PlanningInput, fallback: number): { gPerKwh: number[]; assumed: string[]; unknownGPerKwh: number } {
  const known = input.sites.flatMap((s) => (s.carbonGPerKwh === undefined ? [] : [s.carbonGPerKwh]));
  const unknownGPerKwh = Math.max(fallback, ...known);
  return {
    gPerKwh: input.sites.map((s) => s.carbonGPerKwh ?? unknownGPerKwh),
    assumed: input.sites.filter((s) => s.carbonGPerKwh === undefined).map((s) => s.id),
    unknownGPerKwh,
  };
}

function round(x: number): number {
  return Number.isFinite(x) ? Number(x.toPrecision(6)) : x;
}
