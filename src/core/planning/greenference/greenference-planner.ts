import { z } from "zod";
import { SERVER_POWER_OVERHEAD } from "../../model/power.ts";
import type { LpSolver } from "../../ports/lp-solver.ts";
import { DEFAULT_REPLICA_CONCURRENCY } from "../../scheduling/replica-concurrency.ts";
import { PolicyWeights } from "../../schemas/fleet.ts";
import type { Plan } from "../../schemas/plan.ts";
import type { Slo } from "../../schemas/request-class.ts";
import { allocationsOf } from "../heron/allocations.ts";
import { instanceProblem, type InstanceProblem } from "../heron/instance-problem.ts";
import { solveInstances, type SolveInstancesOptions } from "../heron/instance-solve.ts";
import { addCapacity, emptyCapacity } from "../heron/instance-choice.ts";
import { coverDemand, guestKey } from "../heron/spill-cover.ts";
import { operatingOptions, outsideSlo, paretoOptions, type OptionSet } from "../operating-options.ts";
import { assemblePlan, type Allocation } from "../plan-assembly.ts";
import type { Planner, PlannerResult } from "../planner.ts";
import type { PlanningInput } from "../planning-input.ts";
import { ecoFreqBounds } from "./clock-bounds.ts";
import { withinGatewaySlots } from "./gateway-slots.ts";
import { aboveIdleDraw, aboveIdleFloor } from "./idle-floor.ts";
import { greenferenceCost } from "./greenference-cost.ts";
import { nearMissOptions, priceFallback, withFallback } from "./slo-fallback.ts";
import { servedLoads, spillEdges, withGuests } from "./spill-routing.ts";

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
  /** The budget allows at least this many instances of the largest TP to move per slot (see `instanceProblem`). */
  movableInstances: z.number().int().nonnegative().default(1),
  /** Intensity assumed for a site without one, gCO2/kWh (it is never counted cleaner than a site with a known intensity). */
  unknownCarbonGPerKwh: z.number().nonnegative().default(WORLD_AVERAGE_G_PER_KWH),
  /** "ecofreq": sites run iteration-level frequency control within bounds around the planned clock; "locked": the planned clock. */
  clock: z.enum(["ecofreq", "locked"]).default("ecofreq"),
  /** Serve a class's demand also on instances planned for a class that dominates it (DynamoLLM §IV-B, fragmentation). */
  spill: z.boolean().default(true),
  /**
   * Requests the sites' gateways send one replica at once (the agent's `gatewayReplicaConcurrency`):
   * no instance is planned at a load whose requests in flight would not fit (`withinGatewaySlots`).
   * null: nothing in front of the replicas caps them (a world without site gateways, such as the
   * fluid fleet simulator).
   */
  replicaConcurrency: z.number().int().positive().nullable().default(DEFAULT_REPLICA_CONCURRENCY),
});
export type GreenferenceConfig = z.infer<typeof GreenferenceConfig>;

/**
 * Greenference's combined planner: Heron's Planner-L model (per site and slot, instances of every
 * (GPU, class, TP, clock, load level) within each site's GPUs and forecast power envelope, one
 * (clock, load) per group, a reconfiguration budget, SLO-feasible points only, unserved load at a
 * penalty and reported as shortfall; no instance loaded past what its gateway admits at once,
 * `withinGatewaySlots`) with four more levers and another objective: the model
 * variant (every variant in `input.variants` is a group of its own) and a cost per instance of
 * weighted carbon (energy x the site's intensity: a wind site's is its life-cycle one), energy,
 * request-weighted latency and quality loss (`greenferenceCost`); demand no point can serve within
 * its SLO (none exists, or none has room) runs on the closest points that miss it, at a premium
 * that keeps them last (`priceFallback`), and says so (`outsideSloRps`, notes): load is dropped
 * only for want of GPUs or power; a class may run on instances planned for a class that
 * dominates it (`spillEdges`) at points where it meets its own SLO (`withGuests`), so lightly
 * loaded classes need no instances of their own; a site's round trip from the edge (`rttMs`) is
 * spent of each class's TTFT and E2E objectives there and added to its latency. Instances get EcoFreq bounds
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
  const variants = input.variants ?? [{ id: input.variant, quality: 1 }];
  const bestQuality = Math.max(...variants.map((v) => v.quality));
  // The points a site offers: its round trip from the edge eats into TTFT (and E2E) objectives and adds to every E2E.
  const byRtt = new Map<number, { offered: { qualityLoss: number; sets: OptionSet[] }[]; fallback: OptionSet[][] }>();
  const leversAt = (site: number) => {
    const rtt = input.sites[site]!.rttMs ?? 0;
    let levers = byRtt.get(rtt);
    if (!levers) {
      const classes = input.classes.map((c) => ({ ...c, slo: networkSlo(c.slo, rtt) }));
      const slos = Object.fromEntries(classes.map((c) => [c.id, c.slo]));
      // Which dominated classes meet their own SLO on each point, where spill is on; points outside the SLO host none.
      const hosting = (sets: OptionSet[]) => withRtt(config.spill ? withGuests(sets, input.profile, { model: input.model, classes }) : sets, rtt);
      levers = {
        offered: variants.map((v) => ({ qualityLoss: bestQuality - v.quality, sets: hosting(withinGatewaySlots(operatingOptions(input.profile, { model: input.model, variant: v.id, slos, objective: "min-energy" }), config.replicaConcurrency)) })),
        fallback: variants.map((v) => hosting(nearMissOptions(input.profile, { model: input.model, variant: v.id, slos }))),
      };
      byRtt.set(rtt, levers);
    }
    return levers;
  };
  const { gPerKwh, assumed, unknownGPerKwh } = siteIntensities(input, config.unknownCarbonGPerKwh);
  const priced = (site: number, raw: readonly OptionSet[], qualityLoss: number) =>
    raw.map((set) => ({ ...set, options: set.options.map((o) => ({ ...o, cost: greenferenceCost(o, { carbonGPerKwh: gPerKwh[site]!, qualityLoss }, config.weights) })) }));
  const gpusAt = (site: number) => new Set(input.sites[site]!.gpus.map((g) => g.type));
  // The dearest cost per req/s of any point within an SLO: the unit of the fallback premium and the unserved penalty.
  const dearest = Math.max(0, ...input.sites.flatMap((_, s) => leversAt(s).offered.flatMap(({ qualityLoss, sets }) => priced(s, sets, qualityLoss).filter((set) => gpusAt(s).has(set.gpu)).flatMap((set) => set.options.map((o) => o.cost / o.loadRps)))));
  const atSite = new Map<string, OptionSet[]>();
  const setsAt = (site: number): OptionSet[] => {
    const key = `${gPerKwh[site]}|${input.sites[site]!.rttMs ?? 0}`;
    let sets = atSite.get(key);
    if (!sets) {
      const { offered, fallback } = leversAt(site);
      sets = offered.flatMap(({ qualityLoss, sets: raw }, v) => {
        const missing = priced(site, fallback[v]!, qualityLoss).map((set) => ({ ...set, options: set.options.map((o) => priceFallback(o, o.cost, dearest)) }));
        return aboveIdleDraw(withFallback(priced(site, raw, qualityLoss), missing)).map((set) => ({ ...set, options: paretoOptions(set.options) }));
      });
      atSite.set(key, sets);
    }
    return sets;
  };
  // Instances get the power each site's envelope leaves above its idle GPUs' draw (`aboveIdleFloor`).
  const base = servingFirst(instanceProblem(aboveIdleFloor(input), setsAt, { reconfigBudget: config.reconfigBudget, movableInstances: config.movableInstances }), dearest);
  const withinSlo = input.classes.map((_, c) => base.groups.some((g) => g.classIdx === c && g.options.some((o) => !outsideSlo(o))));
  // An edge only where some point of the host admits the guest (keeps the LP small).
  const hosts = (e: { from: number; to: number }) => base.groups.some((g) => g.classIdx === e.to && g.options.some((o) => !outsideSlo(o) && o.guests?.includes(e.from)));
  const edges = config.spill ? spillEdges(input.classes, withinSlo).filter(hosts) : [];
  const problem: InstanceProblem = edges.length > 0 ? { ...base, spill: edges } : base;
  const out = solveInstances(problem, solver, solve);
  const allOptions = (a: Allocation) => leversAt(a.site).offered[variants.findIndex((v) => v.id === a.variant)]?.sets.find((s) => s.gpu === a.gpu && s.classId === a.classId && s.tp === a.tp)?.options ?? [];
  const used = problem.groups.flatMap((g, gi) => {
    const o = g.options[out.choice.option[gi] ?? -1];
    const count = out.choice.count[gi] ?? 0;
    return o && count > 0 ? [{ classIdx: g.classIdx, capacityRps: count * o.loadRps, outside: outsideSlo(o), excess: o.sloExcess ?? 0, key: guestKey(o.guests), option: o }] : [];
  });
  const capacity = emptyCapacity(input.classes.length);
  for (const u of used) addCapacity(capacity, u.classIdx, u.option, u.capacityRps);
  const cover = coverDemand(problem.demandRps, capacity, edges);
  const classIds = input.classes.map((c) => c.id as string);
  const loads = servedLoads(used, capacity, cover, edges, classIds);
  const allocations = allocationsOf(input, problem, out.choice).map((a, i) => ({ ...(config.clock === "locked" ? a : { ...a, clock: ecoFreqBounds(allOptions(a), a.mhz) }), serves: loads[i]! }));
  let carbonGPerH = 0;
  problem.groups.forEach((g, gi) => {
    const o = g.options[out.choice.option[gi] ?? -1];
    if (o) carbonGPerH += ((out.choice.count[gi] ?? 0) * o.gpuPowerW * SERVER_POWER_OVERHEAD * gPerKwh[g.site]!) / 1000;
  });
  const budget = problem.reconfigBudgetGpus;
  const outsideSloRps = Object.fromEntries(input.classes.flatMap((c, ci) => (cover.ownOutside[ci]! > 1e-9 * Math.max(1, c.demandRps) ? [[c.id, cover.ownOutside[ci]!]] : [])));
  const worstExcess = (ci: number) => Math.max(0, ...used.filter((u) => u.outside && u.classIdx === ci).map((u) => u.excess));
  const notes = [
    `greenference (carbon ${config.weights.carbon}, energy ${config.weights.energy}, latency ${config.weights.latency}, accuracy ${config.weights.accuracy}): ${out.method}, objective ${round(out.usage.objective)}, LP bound ${round(out.lpBound)}, gap ${round(out.gap)}`,
    `carbon at the planned load levels: ${round(carbonGPerH)} gCO2/h`,
    ...(assumed.length === 0 ? [] : [`no carbon intensity for ${assumed.join(", ")}: counted at ${round(unknownGPerKwh)} gCO2/kWh`]),
    ...(budget === undefined ? [] : [`reconfigured ${out.usage.reconfigGpus} GPUs (budget ${round(budget)})`]),
    ...input.classes.flatMap((c, ci) =>
      outsideSloRps[c.id] === undefined
        ? []
        : [`${c.id}: ${round(outsideSloRps[c.id]!)} req/s served outside its SLO (${withinSlo[ci] ? "no point within it had room" : "no profiled point meets it"}), on the closest points, missing it by up to ${round(100 * worstExcess(ci))}%`],
    ),
    ...edges.flatMap((e, i) => (cover.spilled[i]! > 1e-9 ? [`${classIds[e.from]}: ${round(cover.spilled[i]!)} req/s spilled onto ${classIds[e.to]} instances`] : [])),
    ...out.notes,
  ];
  const assembled = assemblePlan(input, allocations, { policy: "greenference", notes });
  const plan = Object.keys(outsideSloRps).length > 0 ? { ...assembled, outsideSloRps: outsideSloRps as Plan["outsideSloRps"] } : assembled;
  const stats = { variables: out.variables, constraints: out.constraints, objective: out.usage.objective, lpBound: out.lpBound, gap: out.gap, method: out.method };
  return { plan, stats };
}

/**
 * The problem with unserved load priced at 100 x `dearest`, the dearest cost per req/s of any option within an SLO (Heron's
 * penalty uses each class's cheapest, which a carbon-free site makes almost nothing: the planner
 * would then rather drop load than serve it on a grid site). Serving comes first, as DESIGN
 * section 6 asks; the reconfiguration penalty keeps its ratio to it.
 */
function servingFirst(p: InstanceProblem, dearest: number): InstanceProblem {
  if (!(dearest > 0) || !Number.isFinite(dearest)) return p;
  const unservedPenalty = 100 * dearest;
  return { ...p, unservedPenalty, reconfigPenalty: (p.reconfigPenalty * unservedPenalty) / p.unservedPenalty };
}

/** A class's SLO as a site sees it: the round trip from the edge already spent of its TTFT and E2E objectives. */
function networkSlo(slo: Slo, rttMs: number): Slo {
  if (rttMs <= 0) return slo;
  const left = (ms: number) => Math.max(1e-9, ms - rttMs);
  return { ...slo, ttftMs: left(slo.ttftMs), ...(slo.e2eMs !== undefined ? { e2eMs: left(slo.e2eMs) } : {}) };
}

/** Options with the round trip added to their E2E latency (what the latency weight prices). */
function withRtt(sets: OptionSet[], rttMs: number): OptionSet[] {
  return rttMs <= 0 ? sets : sets.map((set) => ({ ...set, options: set.options.map((o) => ({ ...o, e2eMs: o.e2eMs + rttMs })) }));
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
