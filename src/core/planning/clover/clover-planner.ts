import { z } from "zod";
import { gpuSpec } from "../../model/gpu-specs.ts";
import { variantLlmSpec, weightBytes } from "../../model/llm-specs.ts";
import { SERVER_POWER_OVERHEAD } from "../../model/power.ts";
import { seededRng } from "../../ports/rng.ts";
import { ModelVariant } from "../../schemas/fleet.ts";
import type { GpuType } from "../../schemas/ids.ts";
import type { Plan } from "../../schemas/plan.ts";
import type { Planner, PlannerResult } from "../planner.ts";
import type { PlanningInput } from "../planning-input.ts";
import { gpuRanges } from "../site-gpus.ts";
import { cloverAnneal } from "./annealing.ts";
import { emptyGraph, sliceCountsOf, type ConfigGraph } from "./config-graph.ts";
import { cloverProblem, evaluate } from "./evaluation.ts";
import { realizable, SLICE_TYPES } from "./mig.ts";
import { migPlan, type ServiceBlock } from "./mig-plan.ts";
import { baseGraph, cloverService } from "./service-model.ts";
import type { RequestShape } from "./slice-performance.ts";
import type { CloverVariant } from "./variants.ts";
import { demandWeightedShape } from "../../forecast/request-shape.ts";

/** World average carbon intensity of electricity in 2022, gCO2/kWh (Ember): Clover's reference C_base and the intensity of a site without one. */
const REFERENCE_G_PER_KWH = 436;

/** The request shape Clover plans for when neither its config nor the edge's measurements give one. */
export const DEFAULT_SHAPE: RequestShape = { inputTokens: 512, outputTokens: 128 };

/** Clover (seed 001) as a fleet planner. */
export const CloverPlannerConfig = z.object({
  kind: z.literal("clover"),
  /** λ of Clover's Eq. (3): weight of carbon against accuracy (0.5 in its evaluation). */
  lambda: z.number().min(0).max(1).default(0.5),
  /**
   * The requests a service answers (Clover serves one application per pool, of one request shape).
   * Absent: the classes' mean requests as the edge measured them, weighted by demand, else
   * `DEFAULT_SHAPE`.
   */
  shape: z.object({ inputTokens: z.number().int().positive(), outputTokens: z.number().int().positive() }).optional(),
  /** A site's GPUs of one type are split into Clover services of this many GPUs, each annealed on its own (bounds the search). */
  serviceGpus: z.number().int().positive().default(8),
  /** Evaluations per annealing run: the stand-in for Clover's 5-minute limit within a Worker's CPU budget. */
  maxEvaluations: z.number().int().positive().default(100),
});
export type CloverPlannerConfig = z.infer<typeof CloverPlannerConfig>;

/**
 * Clover (seed 001) over a fleet: each site's GPUs (as many as its power runs at TDP) form
 * services of `serviceGpus`, each gets its share of the demand, and Clover's simulated annealing
 * picks model variants and MIG slices for it at the site's carbon intensity, warm-started from the
 * configuration in force (`cloverAnneal`, seeded by the plan version, so a plan is reproducible).
 * The result is one entry per (variant, slice) with a replica per slice, on the layout `gpuLayouts`
 * finds, at the GPU's top clock (Clover does not scale frequency); routing follows each slice's
 * share of the service's capacity (Clover's single FIFO queue).
 *
 * @example
 * const { plan } = cloverPlanner(CloverPlannerConfig.parse({ kind: "clover", lambda: 0.5 })).plan(input, solver);
 */
export function cloverPlanner(config: CloverPlannerConfig): Planner {
  return { plan: (input) => planClover(input, config) };
}

function planClover(input: PlanningInput, config: CloverPlannerConfig): PlannerResult {
  const notes: string[] = [];
  const shape = requestShape(input, config, notes);
  const variants = familyOf(input, notes);
  refuseUnservable(input, variants, shape);
  const demandRps = input.classes.reduce((s, c) => s + c.demandRps, 0);
  const blocks = serviceBlocks(input, config.serviceGpus);
  const capacityOf = (b: (typeof blocks)[number]) => b.gpus * (wholeCapacity(variants, b.type, shape) ?? 0);
  const totalCapacity = blocks.reduce((s, b) => s + capacityOf(b), 0);
  const solved: ServiceBlock[] = [];
  // Identical services (same GPUs, load, intensity and configuration in force) are annealed once.
  const done = new Map<string, ConfigGraph>();
  for (const b of blocks) {
    const site = input.sites[b.site]!;
    const ci = site.carbonGPerKwh ?? REFERENCE_G_PER_KWH;
    const arrivalRps = totalCapacity > 0 ? (demandRps * capacityOf(b)) / totalCapacity : 0;
    const fitting = variants.filter((v) => wholeCapacity([v], b.type, shape) !== undefined);
    if (fitting.length === 0) {
      notes.push(`clover ${site.id}/${b.type}: no variant of ${input.model} fits a whole ${b.type}`);
      continue;
    }
    const service = cloverService({ variants: fitting, gpu: gpuSpec(b.type), gpus: b.gpus, shape, arrivalRps: Math.max(arrivalRps, 1e-6) });
    const start = warmStart(input.previous, site.id, b, fitting) ?? baseGraph(service);
    const key = `${b.type}|${b.gpus}|${arrivalRps}|${ci}|${start.map((r) => r.join(",")).join(";")}`;
    let graph = done.get(key);
    if (!graph) {
      const problem = cloverProblem(service, { lambda: config.lambda, baseCi: REFERENCE_G_PER_KWH });
      const run = arrivalRps > 0 ? cloverAnneal(problem, start, ci, { rng: seededRng(input.version * 7919 + b.site * 31 + b.start), maxEvaluations: config.maxEvaluations }) : undefined;
      const best = run?.best ?? evaluate(problem, start, ci);
      graph = best.graph;
      done.set(key, graph);
      const searched = run ? `${run.evaluations} evaluations` : "no demand: configuration kept";
      notes.push(`clover ${site.id}/${b.type} (${b.gpus} GPUs, ${round(arrivalRps)} req/s, ${round(ci)} gCO2/kWh): f ${round(best.f)}, p95 ${round(best.measurement.p95S)} s (SLA ${round(problem.slaS)} s${best.slaMet ? "" : ", missed"}), ${searched}`);
    }
    solved.push({ site: b.site, type: b.type, start: b.start, gpus: b.gpus, variants: fitting, service, graph });
  }
  const plan = migPlan(input, solved, { policy: "clover", notes, clock: (type) => ({ mode: "locked", mhz: gpuSpec(type).maxMhz }) });
  return { plan };
}

/**
 * Throws where no variant fits a whole GPU of any type the fleet's sites have (a model too large
 * for Clover's one-GPU services on this hardware): a plan of no instance would stop every engine
 * of the fleet, where a failed run leaves the plan in force.
 */
function refuseUnservable(input: PlanningInput, variants: readonly CloverVariant[], shape: RequestShape): void {
  const types = [...new Set(input.sites.flatMap((s) => s.gpus.map((g) => g.type)))];
  if (types.some((t) => wholeCapacity(variants, t, shape) !== undefined)) return;
  const offered = (input.variants ?? [{ id: input.variant }]).map((v) => v.id).join(", ");
  throw new Error(`clover cannot serve ${input.model} on this fleet: no variant of it (${offered}) fits a whole ${types.join(" or ")}`);
}

/** The input's variants with the architecture each runs (lowest quality first); unknown ones are noted and left out. */
function familyOf(input: PlanningInput, notes: string[]): CloverVariant[] {
  const offered = input.variants ?? [{ id: input.variant, quality: 1 }];
  return offered
    .flatMap((v) => {
      try {
        const llm = variantLlmSpec(input.model, v.id);
        return [{ llm, variant: ModelVariant.parse({ model: input.model, id: v.id, quality: v.quality, memoryGb: weightBytes(llm) / 1e9, parameterCount: llm.params }) }];
      } catch (error) {
        notes.push(`clover: variant ${v.id} left out: ${(error as Error).message}`);
        return [];
      }
    })
    .sort((a, b) => a.variant.quality - b.variant.quality);
}

/** The one request shape Clover plans for: its config's, else the classes' measured mean requests weighted by demand, else the default; noted. */
function requestShape(input: PlanningInput, config: CloverPlannerConfig, notes: string[]): RequestShape {
  const mean = demandWeightedShape(input.classes);
  const measured = mean && { inputTokens: Math.max(1, Math.round(mean.inputTokens)), outputTokens: Math.max(1, Math.round(mean.outputTokens)) };
  const [shape, from] = config.shape ? [config.shape, "the policy's config"] : measured ? [measured, "the classes' mean requests measured at the edge, weighted by demand"] : [DEFAULT_SHAPE, "the default (no class has a measured mean request yet)"];
  notes.push(`clover: requests of ${round(shape.inputTokens)} prompt and ${round(shape.outputTokens)} output tokens, from ${from}`);
  return shape;
}

/** Requests per second the best variant serves on one whole GPU of a type, or undefined when none fits. */
function wholeCapacity(variants: readonly CloverVariant[], type: GpuType, shape: RequestShape): number | undefined {
  for (const v of [...variants].reverse()) {
    try {
      return cloverService({ variants: [v], gpu: gpuSpec(type), gpus: 1, shape, arrivalRps: 1 }).perf[0]![SLICE_TYPES.length - 1]!.capacityRps;
    } catch {
      continue;
    }
  }
  return undefined;
}

/** The GPUs each site powers at TDP (server overhead included), by type in the site's order, cut into services of `size`. */
function serviceBlocks(input: PlanningInput, size: number) {
  return input.sites.flatMap((site, si) => {
    let powered = site.powerW;
    return gpuRanges(site.gpus).flatMap((range) => {
      const perGpuW = gpuSpec(range.type).tdpW * SERVER_POWER_OVERHEAD;
      const usable = Math.max(0, Math.min(range.count, Math.floor(powered / perGpuW)));
      powered -= usable * perGpuW;
      const count = Math.ceil(usable / size);
      return Array.from({ length: count }, (_, k) => ({ site: si, type: range.type, start: range.start + k * size, gpus: Math.min(size, usable - k * size) }));
    });
  });
}

/** The graph of the plan in force at a site's GPU block, when it ran the same variants on exactly those GPUs. */
function warmStart(previous: Plan | undefined, site: string, b: { start: number; gpus: number }, variants: readonly CloverVariant[]): ConfigGraph | undefined {
  const entries = previous?.sites.find((s) => s.site === site)?.instances.filter((i) => i.mig && i.gpus.every((g) => g >= b.start && g < b.start + b.gpus)) ?? [];
  if (entries.length === 0) return undefined;
  const g = emptyGraph(variants.length);
  for (const e of entries) {
    const v = variants.findIndex((x) => x.variant.id === e.variant);
    if (v < 0) return undefined;
    g[v]![SLICE_TYPES.indexOf(e.mig!)]! += e.replicas;
  }
  return realizable(sliceCountsOf(g), b.gpus) ? g : undefined;
}

function round(x: number): number {
  return Number.isFinite(x) ? Number(x.toPrecision(4)) : x;
}
