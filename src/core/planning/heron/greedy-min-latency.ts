import { z } from "zod";
import type { ClassId, GpuType } from "../../schemas/ids.ts";
import type { ProfileRow } from "../../schemas/profile.ts";
import { assemblePlan, type Allocation } from "../plan-assembly.ts";
import type { Planner, PlannerResult } from "../planner.ts";
import type { PlanningInput } from "../planning-input.ts";
import { meetsSlo } from "../slo.ts";
import { kneeIndex } from "./knee-point.ts";
import { wrrSiteDemand } from "./wrr-shares.ts";

/** Heron's baseline (d): greedy minimum latency, TP8 at the top clock, load up to the knee. */
export const HeronGreedyMinLatencyConfig = z.object({ kind: z.literal("heron-greedy-min-latency") });
export type HeronGreedyMinLatencyConfig = z.infer<typeof HeronGreedyMinLatencyConfig>;

/**
 * Heron §6 (d): every instance runs at the largest TP (TP8) and the highest clock; its load is
 * capped at the knee of the class's latency-load curve (lowest load left a third of requests
 * unassigned in Heron's runs). Sites get WRR shares by GPUs; each site adds instances one class at
 * a time in turn while its GPUs allow. Like the WRR + DynamoLLM baseline it is not power-variability
 * aware (Heron §5.2): the wind a site has does not shape its plan, and when the wind falls below
 * what the plan draws the site drops the excess. What its GPUs cannot take is shortfall.
 *
 * @example
 * const { plan } = heronGreedyMinLatency().plan(input, solver);
 */
export function heronGreedyMinLatency(): Planner {
  return { plan: (input) => planGreedy(input) };
}

/** The knee-point operating point per (GPU, class): largest TP, top clock, SLO-feasible loads. */
export function kneePoints(input: PlanningInput): Map<string, ProfileRow> {
  const out = new Map<string, ProfileRow>();
  const rows = input.profile.filter((r) => r.model === input.model && r.variant === input.variant && r.loadRps > 0);
  for (const c of input.classes) {
    for (const gpu of new Set(rows.map((r) => r.gpu))) {
      const mine = rows.filter((r) => r.gpu === gpu && r.classId === c.id);
      if (mine.length === 0) continue;
      const tp = Math.max(...mine.map((r) => r.tp));
      const mhz = Math.max(...mine.filter((r) => r.tp === tp).map((r) => r.mhz));
      const curve = mine.filter((r) => r.tp === tp && r.mhz === mhz && meetsSlo(r, c.slo)).sort((a, b) => a.loadRps - b.loadRps);
      if (curve.length > 0) out.set(`${gpu}|${c.id}`, curve[kneeIndex(curve.map((r) => ({ x: r.loadRps, y: r.e2eMs.p50 })))]!);
    }
  }
  return out;
}

function planGreedy(input: PlanningInput): PlannerResult {
  const knees = kneePoints(input);
  const siteDemand = wrrSiteDemand(input);
  const allocations: Allocation[] = [];
  input.sites.forEach((site, s) => {
    const free = new Map<GpuType, number>(site.gpus.map((g) => [g.type, g.count]));
    const left = input.classes.map((c, ci) => siteDemand[s]![ci]!);
    const mine = new Map<string, Allocation>();
    for (let added = true; added; ) {
      added = false;
      input.classes.forEach((c, ci) => {
        if (left[ci]! <= 1e-9) return;
        for (const g of site.gpus) {
          const knee = knees.get(`${g.type}|${c.id}`);
          if (!knee || free.get(g.type)! < knee.tp) continue;
          free.set(g.type, free.get(g.type)! - knee.tp);
          left[ci] = left[ci]! - knee.loadRps;
          const key = `${g.type}|${c.id}`;
          const a = mine.get(key) ?? mine.set(key, { site: s, gpu: g.type, classId: c.id as ClassId, tp: knee.tp, mhz: knee.mhz, loadRps: knee.loadRps, count: 0 }).get(key)!;
          a.count++;
          added = true;
          return;
        }
      });
    }
    allocations.push(...mine.values());
  });
  const plan = assemblePlan(input, allocations, { policy: "heron", siteDemandRps: siteDemand, notes: ["heron-greedy-min-latency: TP8, top clock, knee-point load, WRR by GPUs"] });
  return { plan };
}
