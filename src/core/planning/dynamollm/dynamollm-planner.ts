import { z } from "zod";
import { gpuSpec } from "../../model/gpu-specs.ts";
import { llmSpecs, type LlmSpec } from "../../model/llm-specs.ts";
import { SERVER_POWER_OVERHEAD } from "../../model/power.ts";
import type { LpSolver } from "../../ports/lp-solver.ts";
import type { ClassId, GpuType } from "../../schemas/ids.ts";
import type { ProfileRow } from "../../schemas/profile.ts";
import { ClassRates } from "../../schemas/plan.ts";
import { operatingOptions } from "../operating-options.ts";
import type { Planner, PlannerResult } from "../planner.ts";
import type { PlanningInput } from "../planning-input.ts";
import { CLUSTER_EPOCH_MS } from "./cluster-manager.ts";
import { planCluster, type ClusterContext } from "./cluster-systems.ts";
import type { Eq1Option } from "./eq1.ts";
import type { LoadForecast } from "./load-template.ts";
import { currentLayouts } from "./pool-entry.ts";
import { poolPlan, type ClusterEntries } from "./pool-plan.ts";
import { tauSeconds } from "./reshard-overhead.ts";

export const DynamoLlmConfig = z.object({
  kind: z.literal("dynamollm"),
  /** DynamoLLM itself, or one of the baselines of its §V-A. */
  system: z.enum(["dynamollm", "single-pool", "multi-pool", "scale-inst", "scale-shard", "scale-freq"]).default("dynamollm"),
  /** GPUs per server: the cluster manager's unit (a DGX has 8); a site with fewer is one node of what it has. */
  nodeGpus: z.number().int().positive().default(8),
  /** TP degrees to use (DynamoLLM profiles TP2, TP4, TP8); default: every TP the profile has. */
  tps: z.array(z.number().int().positive()).min(1).optional(),
  /** The peak per class that static pools (SinglePool, MultiPool, ScaleShard, ScaleFreq) are provisioned for; default: the slot's demand. */
  provisionRps: ClassRates.optional(),
  /** Engine synchronisation after re-sharding, seconds. */
  syncS: z.number().nonnegative().default(2),
  /** Share of a pool's nodes re-sharded at once. */
  staggerFraction: z.number().gt(0).max(1).default(0.25),
});
export type DynamoLlmConfig = z.infer<typeof DynamoLlmConfig>;

/**
 * DynamoLLM (seed 003) as a fleet planner: per site and GPU type (a "cluster"), the cluster
 * manager sizes per-class pools from the predicted peak of the 30-minute epoch that contains
 * `nowMs` (from `forecast`, a load template; without one, the slot's demand), and the pool
 * managers choose each pool's TP layout at max clock for the slot's demand, within the SLO of
 * every class the pool serves (spilled ones too); instances get the
 * instance manager's clock policy (see `instanceManagerDelta` for its 5 s decisions). Call it
 * every 5 minutes: within an epoch the cluster manager's sizes repeat, since the forecast does.
 * Demand is split over clusters in proportion to the nodes each can power. `system` selects a
 * §V-A baseline instead. GPU energy (average GPU power) is what the managers minimise.
 *
 * @example
 * const planner = dynamoLlmPlanner(DynamoLlmConfig.parse({ kind: "dynamollm" }), { forecast: loadTemplate(history) });
 * const { plan } = planner.plan(input, solver);
 */
export function dynamoLlmPlanner(config: DynamoLlmConfig, o: { forecast?: LoadForecast } = {}): Planner {
  return { plan: (input, solver) => planDynamo(input, solver, config, o.forecast) };
}

function planDynamo(input: PlanningInput, solver: LpSolver, config: DynamoLlmConfig, forecast: LoadForecast | undefined): PlannerResult {
  const slos = Object.fromEntries(input.classes.map((c) => [c.id, c.slo]));
  const sets = operatingOptions(input.profile, { model: input.model, variant: input.variant, slos, objective: "min-energy" }).filter((s) => !config.tps || config.tps.includes(s.tp));
  const curves = new Map<string, ProfileRow[]>();
  for (const r of input.profile) {
    if (r.model !== input.model || r.variant !== input.variant) continue;
    const key = `${r.gpu}|${r.classId}|${r.tp}|${r.mhz}`;
    (curves.get(key) ?? curves.set(key, []).get(key)!).push(r);
  }
  const llm = (llmSpecs as Record<string, LlmSpec>)[input.model];
  const clusters = input.sites.flatMap((site, si) => {
    const wallW = site.gpus.reduce((s, g) => s + g.count * gpuSpec(g.type).tdpW * SERVER_POWER_OVERHEAD, 0);
    const powered = Math.min(1, site.powerW / Math.max(1e-9, wallW));
    // A site smaller than a server is one node of what it has.
    return site.gpus.filter((g) => sets.some((s) => s.gpu === g.type)).map((g) => {
      const nodeGpus = Math.min(config.nodeGpus, g.count);
      return { site: si, gpu: g.type, nodeGpus, nodes: Math.floor(Math.floor(g.count * powered) / nodeGpus) };
    });
  });
  const totalNodes = clusters.reduce((s, c) => s + c.nodes, 0);
  const epochStart = Math.floor(input.nowMs / CLUSTER_EPOCH_MS) * CLUSTER_EPOCH_MS;
  const perClass = (f: (c: PlanningInput["classes"][number]) => number, share: number) => Object.fromEntries(input.classes.map((c) => [c.id, f(c) * share])) as Record<ClassId, number>;
  const notes = [`dynamollm ${config.system}: ${totalNodes} nodes of up to ${config.nodeGpus} GPUs in ${clusters.length} clusters`];
  const out: ClusterEntries[] = clusters.map((cluster) => {
    const share = totalNodes > 0 ? cluster.nodes / totalNodes : 0;
    const mine = sets.filter((s) => s.gpu === cluster.gpu);
    const options = new Map<ClassId, Eq1Option[]>();
    for (const s of mine) options.set(s.classId, [...(options.get(s.classId) ?? []), ...s.options.map((x) => ({ tp: s.tp, mhz: x.mhz, loadRps: x.loadRps, powerW: x.gpuPowerW }))]);
    const clocks = mine.flatMap((s) => s.options.map((x) => x.mhz));
    const tps = [...new Set(mine.map((s) => s.tp))].sort((a, b) => a - b);
    const ctx: ClusterContext = {
      nodes: cluster.nodes,
      nodeGpus: cluster.nodeGpus,
      classes: input.classes,
      demandRps: perClass((c) => c.demandRps, share),
      peakRps: perClass((c) => (forecast ? forecast.peakOver(c.id, epochStart, epochStart + CLUSTER_EPOCH_MS) : c.demandRps), share),
      provisionRps: perClass((c) => config.provisionRps?.[c.id] ?? c.demandRps, share),
      options,
      tps,
      rowsAt: (c, tp, mhz) => curves.get(`${cluster.gpu}|${c}|${tp}|${mhz}`) ?? [],
      maxTp: Math.max(...mine.map((s) => s.tp)),
      maxMhz: Math.max(...clocks),
      minMhz: Math.min(...clocks),
      current: currentLayouts(input.previous, input.sites[cluster.site]!.id, input.sites[cluster.site]!.gpus.length > 1 ? cluster.gpu : undefined),
      reshard: { tauS: llm ? tauSeconds(llm, gpuSpec(cluster.gpu)) : 0.05, syncS: config.syncS, staggerFraction: config.staggerFraction },
    };
    const planned = planCluster(config.system, ctx, solver);
    notes.push(...planned.notes.map((n) => `${input.sites[cluster.site]!.id}/${cluster.gpu}: ${n}`));
    return { site: cluster.site, gpu: cluster.gpu as GpuType, entries: planned.entries };
  });
  return { plan: poolPlan(input, out, notes) };
}
