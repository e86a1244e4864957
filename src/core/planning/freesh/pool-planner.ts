import { z } from "zod";
import type { LpSolver } from "../../ports/lp-solver.ts";
import { SERVER_POWER_OVERHEAD } from "../../model/power.ts";
import type { ClassId, GpuType } from "../../schemas/ids.ts";
import type { ProfileRow } from "../../schemas/profile.ts";
import type { Planner, PlannerResult } from "../planner.ts";
import type { PlanningInput } from "../planning-input.ts";
import { meetsSlo } from "../slo.ts";
import { lengthPartitions, planOverClasses, type LengthPartition } from "./length-partitions.ts";
import { poolPlan } from "./pool-plan.ts";
import { FreeshPoolInput, type FreeshConfigPoint, type FreeshPoolInputIn } from "./pool-input.ts";
import { solveFreeshPool } from "./pool-solve.ts";

/** FREESH's pool planner as a fleet policy. */
export const FreeshPoolPlannerConfig = z.object({
  kind: z.literal("freesh-pool"),
  objective: z.enum(["carbon", "energy"]).default("carbon"),
  alpha: z.number().positive().default(1.1),
  /**
   * Marginal emission rates per site id over the slot (any number of equal steps; a shorter one
   * holds its last value); a site without one counts at its `carbonGPerKwh`, and without either
   * the carbon objective falls back to energy, with a note.
   */
  marginalEmissions: z.record(z.string(), z.array(z.number()).min(1)).optional(),
  /** Bound each site's peak draw (x1.82) by its power: not in FREESH, which has no power budget. */
  respectPowerCaps: z.boolean().default(true),
});
export type FreeshPoolPlannerConfig = z.infer<typeof FreeshPoolPlannerConfig>;

/**
 * FREESH's pool MILP over a fleet `PlanningInput`, once per 30-minute episode: the request types
 * are those of FREESH's selectable length partitions over the fleet's classes (`lengthPartitions`:
 * every short/long split of input and output bins), and (1f) picks one; work modes are the (GPU
 * type, TP) pairs profiled; a type's configuration on a mode is its slowest class's point at the
 * highest profiled clock with the most load that meets that class's SLO (FREESH profiles L̄ at the
 * top clock), its average power as P̃. Workers get MIAD clocks from the GPU's lowest clock to that
 * top clock, and the site's gateway orders its queue least laxity first (the policy's settings).
 * The plan is restated over the fleet's classes (`planOverClasses`).
 *
 * @example
 * const { plan, stats } = freeshPoolPlanner(FreeshPoolPlannerConfig.parse({ kind: "freesh-pool", objective: "energy" })).plan(input, solver);
 */
export function freeshPoolPlanner(config: FreeshPoolPlannerConfig): Planner {
  return { plan: (input, solver) => planFreesh(input, solver, config) };
}

function planFreesh(input: PlanningInput, solver: LpSolver, config: FreeshPoolPlannerConfig): PlannerResult {
  const notes: string[] = [];
  const rows = input.profile.filter((r) => r.model === input.model && r.variant === input.variant);
  const modes = [...new Set(rows.map((r) => `${r.gpu}|${r.tp}`))].sort().map((key) => {
    const [gpu, tp] = key.split("|") as [GpuType, string];
    return { name: `${gpu}x${tp}`, gpu, tp: Number(tp) };
  });
  // The configured series, else the site's intensity over the slot as one step.
  const given = input.sites.map((s) => config.marginalEmissions?.[s.id] ?? (s.carbonGPerKwh !== undefined ? [s.carbonGPerKwh] : undefined));
  let objective = config.objective;
  if (objective === "carbon" && given.some((x) => x === undefined)) {
    objective = "energy";
    notes.push("freesh: no emission rate for every site; energy objective used");
  }
  const steps = objective === "carbon" ? Math.max(...given.map((x) => x?.length ?? 1)) : 1;
  const series = given.map((x) => x && Array.from({ length: steps }, (_, k) => x[Math.min(k, x.length - 1)]!));
  const partitions = lengthPartitions(input.classes);
  const points = input.classes.map((c) => modes.map((m) => topClockPoint(rows.filter((r) => r.classId === c.id && r.gpu === m.gpu && r.tp === m.tp), c.slo)));
  const members = (p: LengthPartition, t: number) => input.classes.flatMap((c, ci) => (p.typeOf[ci] === t ? [{ c, ci }] : []));
  const pool = FreeshPoolInput.parse({
    types: partitions[0]!.types,
    modes: modes.map((m) => ({ name: m.name, gpus: { [m.gpu]: m.tp } })),
    sites: input.sites.map((s) => ({ name: s.id, gpus: Object.fromEntries(s.gpus.map((g) => [g.type, g.count])), ...(config.respectPowerCaps ? { powerCapW: Math.max(1e-6, s.powerW) } : {}) })),
    partitions: partitions.map((p) => ({
      name: p.name,
      configs: p.types.map((_, t) => modes.map((_, k) => slowest(members(p, t).map(({ ci }) => points[ci]![k]!)))),
      demandQps: Array.from({ length: steps }, () => p.types.map((_, t) => members(p, t).reduce((sum, { c }) => sum + c.demandRps, 0))),
      latencyToleranceS: p.types.map((_, t) => Math.min(...members(p, t).map(({ c }) => (c.slo.e2eMs !== undefined ? c.slo.e2eMs / 1e3 : Number.MAX_VALUE)))),
    })),
    emissions: series.map((x) => (objective === "carbon" ? x! : [0])),
    stepHours: input.horizonMs / 3.6e6 / steps,
    alpha: config.alpha,
    // Each class's TTFT/TBT SLO already chose its point (`topClockPoint`); a type has no SLO of its own.
    slo: { tbtMs: partitions[0]!.types.map(() => Number.MAX_VALUE), ttftMs: partitions[0]!.types.map(() => Number.MAX_VALUE) },
    objective,
  } satisfies FreeshPoolInputIn);
  const result = solveFreeshPool(pool, solver);
  const chosen = partitions[result.partition]!;
  notes.push(`freesh-pool ${objective}: ${result.status}, partition ${chosen.name}, objective ${round(result.objective)}, LP bound ${round(result.lpBound)}, gap ${round(result.gap)}`);
  const typeDemand = pool.partitions[result.partition]!.demandQps[0]!;
  const byType = poolPlan(pool, result, {
    version: input.version,
    nowMs: input.nowMs,
    horizonMs: input.horizonMs,
    model: input.model,
    variant: input.variant,
    sites: input.sites,
    gpuTypes: Object.fromEntries(modes.map((m) => [m.gpu, m.gpu])),
    classIds: chosen.types as ClassId[],
    demandRps: typeDemand,
    topMhz: (gpu, tp) => Math.max(...rows.filter((r) => r.gpu === gpu && r.tp === tp).map((r) => r.mhz)),
    notes,
  });
  const plan = planOverClasses(byType, chosen, input.classes);
  return { plan, stats: { variables: result.variables, constraints: result.constraints, objective: result.objective, lpBound: result.lpBound, gap: result.gap, method: "milp" } };
}

/** A type's configuration on a mode: what its slowest class manages (no class of it may be served worse). */
function slowest(points: readonly FreeshConfigPoint[]): FreeshConfigPoint {
  if (points.some((p) => p.maxQps <= 0)) return { maxQps: 0, powerW: 0, latencyS: 0, tbtMs: 0, ttftMs: 0 };
  const least = points.reduce((a, b) => (b.maxQps < a.maxQps ? b : a));
  return { ...least, latencyS: Math.max(...points.map((p) => p.latencyS)), tbtMs: Math.max(...points.map((p) => p.tbtMs)), ttftMs: Math.max(...points.map((p) => p.ttftMs)), capPowerW: Math.max(...points.map((p) => p.capPowerW ?? p.powerW)) };
}

/** The point FREESH would profile: highest clock, most load within the SLO (max QPS 0 when none). */
function topClockPoint(rows: readonly ProfileRow[], slo: PlanningInput["classes"][number]["slo"]): FreeshConfigPoint {
  const top = Math.max(0, ...rows.map((r) => r.mhz));
  const ok = rows.filter((r) => r.mhz === top && r.loadRps > 0 && meetsSlo(r, slo));
  const best = ok.reduce<ProfileRow | undefined>((a, b) => (!a || b.loadRps > a.loadRps ? b : a), undefined);
  if (!best) return { maxQps: 0, powerW: 0, latencyS: 0, tbtMs: 0, ttftMs: 0 };
  return { maxQps: best.loadRps, powerW: best.avgPowerW, capPowerW: best.peakPowerW * SERVER_POWER_OVERHEAD, latencyS: best.e2eMs.p50 / 1e3, tbtMs: best.tbtMs.p99, ttftMs: best.ttftMs.p99 };
}

function round(x: number): number {
  return Number.isFinite(x) ? Number(x.toPrecision(6)) : x;
}
