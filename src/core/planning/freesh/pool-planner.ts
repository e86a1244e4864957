import { z } from "zod";
import type { LpSolver } from "../../ports/lp-solver.ts";
import { SERVER_POWER_OVERHEAD } from "../../model/power.ts";
import type { GpuType } from "../../schemas/ids.ts";
import type { ProfileRow } from "../../schemas/profile.ts";
import type { Planner, PlannerResult } from "../planner.ts";
import type { PlanningInput } from "../planning-input.ts";
import { meetsSlo } from "../slo.ts";
import { poolPlan } from "./pool-plan.ts";
import { FreeshPoolInput, type FreeshConfigPoint, type FreeshPoolInputIn } from "./pool-input.ts";
import { solveFreeshPool } from "./pool-solve.ts";

/** FREESH's pool planner as a fleet policy. */
export const FreeshPoolPlannerConfig = z.object({
  kind: z.literal("freesh-pool"),
  objective: z.enum(["carbon", "energy"]).default("carbon"),
  alpha: z.number().positive().default(1.1),
  /**
   * Marginal emission rates per site id over the slot (any number of equal steps); the carbon
   * objective needs one series per site and falls back to energy, with a note, without them.
   */
  marginalEmissions: z.record(z.string(), z.array(z.number()).min(1)).optional(),
  /** Bound each site's peak draw (x1.82) by its power: not in FREESH, which has no power budget. */
  respectPowerCaps: z.boolean().default(true),
});
export type FreeshPoolPlannerConfig = z.infer<typeof FreeshPoolPlannerConfig>;

/**
 * FREESH's pool MILP over a fleet `PlanningInput`: one partition (the input's classes), work modes
 * = the (GPU type, TP) pairs profiled, each configuration at its highest profiled clock with the
 * most load that meets the class SLO (FREESH profiles L̄ at the top clock), its average power as
 * P̃. Workers get MIAD clocks. The input carries no alternative partitions, so (1f) has one choice.
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
  const series = input.sites.map((s) => config.marginalEmissions?.[s.id]);
  let objective = config.objective;
  if (objective === "carbon" && series.some((x) => x === undefined)) {
    objective = "energy";
    notes.push("freesh: no marginal emissions for every site; energy objective used");
  }
  const steps = objective === "carbon" ? Math.max(...series.map((x) => x?.length ?? 1)) : 1;
  const pool = FreeshPoolInput.parse({
    types: input.classes.map((c) => c.id),
    modes: modes.map((m) => ({ name: m.name, gpus: { [m.gpu]: m.tp } })),
    sites: input.sites.map((s) => ({ name: s.id, gpus: Object.fromEntries(s.gpus.map((g) => [g.type, g.count])), ...(config.respectPowerCaps ? { powerCapW: Math.max(1e-6, s.powerW) } : {}) })),
    partitions: [{
      name: "input",
      configs: input.classes.map((c) => modes.map((m) => topClockPoint(rows.filter((r) => r.classId === c.id && r.gpu === m.gpu && r.tp === m.tp), c.slo))),
      demandQps: Array.from({ length: steps }, () => input.classes.map((c) => c.demandRps)),
      latencyToleranceS: input.classes.map((c) => (c.slo.e2eMs !== undefined ? c.slo.e2eMs / 1e3 : Number.MAX_VALUE)),
    }],
    emissions: series.map((x) => (objective === "carbon" ? x! : [0])),
    stepHours: input.horizonMs / 3.6e6 / steps,
    alpha: config.alpha,
    slo: { tbtMs: input.classes.map((c) => c.slo.tbtMs), ttftMs: input.classes.map((c) => c.slo.ttftMs) },
    objective,
  } satisfies FreeshPoolInputIn);
  const result = solveFreeshPool(pool, solver);
  notes.push(`freesh-pool ${objective}: ${result.status}, objective ${round(result.objective)}, LP bound ${round(result.lpBound)}, gap ${round(result.gap)}`);
  const plan = poolPlan(pool, result, {
    version: input.version,
    nowMs: input.nowMs,
    horizonMs: input.horizonMs,
    model: input.model,
    variant: input.variant,
    sites: input.sites,
    gpuTypes: Object.fromEntries(modes.map((m) => [m.gpu, m.gpu])),
    classIds: input.classes.map((c) => c.id),
    demandRps: input.classes.map((c) => c.demandRps),
    notes,
  });
  return { plan, stats: { variables: result.variables, constraints: result.constraints, objective: result.objective, lpBound: result.lpBound, gap: result.gap, method: "milp" } };
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
