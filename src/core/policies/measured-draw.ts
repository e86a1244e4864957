import { EntryCurves } from "../planning/heron/entry-curves.ts";
import { operatingOptions } from "../planning/operating-options.ts";
import { ceilingMhz } from "../planning/plan-power.ts";
import type { PlannerSInput } from "../planning/heron/planner-s.ts";
import { mainClass } from "../planning/plan-reading.ts";
import { gpuRanges, gpuTypeAt, type GpuRange } from "../planning/site-gpus.ts";
import type { SiteDraw } from "../routing/site-status.ts";
import type { ClockSetting, Plan, PlannedInstance } from "../schemas/plan.ts";

/**
 * How long after a plan or correction is made before a site's draw counts as measured on it: an
 * agent polls its plan and heartbeats every 5 s by default, so a heartbeat sent 10 s later comes
 * from a site that runs it.
 */
export const DRAW_SETTLE_MS = 10_000;

/** What a site draws that Planner-S's power model does not count. */
export interface UnmodelledDraw {
  /** Its meter's reading (servers included), W. */
  measuredW: number;
  /** What the profile says the plan in force draws there, in the planners' units (peak x server overhead), W. */
  modelledW: number;
  /** measured - modelled, or 0 when the model counts at least what the meter reads. */
  excessW: number;
}

/**
 * Per site, the power its meter reads beyond what the profile says the plan in force draws there as
 * Planner-S counts it (each instance at its routed load, one without load at 0 W; unlike
 * `sitePowerAtCeilingW`, which prices the planned load): idle GPUs, instances the profile
 * understates, anything else on the site's feed. Planner-S plans the site on its power less this,
 * so the plan fits the meter and not only the model. A draw counts when the site had applied the plan's
 * version and sent it at least `settleMs` after the plan in force was made (`inForceSinceMs`), and
 * when the profile models every instance the site runs (the input's model and variant, options
 * within the SLO for its GPU, main class and TP at its ceiling clock, no MIG slices); other sites
 * are left out.
 *
 * @example
 * unmodelledDraw(input, planInForce, [{ site: "wind-a", watts: 9000, atMs, planVersion: 7 }], correctedAtMs);
 * // { "wind-a": { measuredW: 9000, modelledW: 7600, excessW: 1400 } }
 */
export function unmodelledDraw(input: PlannerSInput, planInForce: Plan, draws: readonly SiteDraw[], inForceSinceMs: number, settleMs = DRAW_SETTLE_MS): Record<string, UnmodelledDraw> {
  const slos = Object.fromEntries(input.classes.map((c) => [c.id, c.slo]));
  const sets = operatingOptions(input.profile, { model: input.model, variant: input.variant, slos, objective: "min-power" });
  const curves = new Map(sets.map((s) => [`${s.gpu}|${s.classId}|${s.tp}`, new EntryCurves(s.options)]));
  const routed = new Map<string, number>();
  for (const targets of Object.values(planInForce.routing)) for (const t of targets ?? []) routed.set(`${t.site}/${t.instance}`, (routed.get(`${t.site}/${t.instance}`) ?? 0) + t.weight);
  const out: Record<string, UnmodelledDraw> = {};
  for (const draw of draws) {
    if (draw.planVersion !== planInForce.version || draw.atMs < inForceSinceMs + settleMs) continue;
    const site = input.sites.find((s) => s.id === draw.site);
    const instances = planInForce.sites.find((s) => s.site === draw.site)?.instances ?? [];
    const modelledW = site && modelledSiteW(instances, gpuRanges(site.gpus), input, curves, (id) => routed.get(`${draw.site}/${id}`) ?? 0);
    if (modelledW !== undefined) out[draw.site] = { measuredW: draw.watts, modelledW, excessW: Math.max(0, draw.watts - modelledW) };
  }
  return out;
}

/** A site's instances at their routed loads, as Planner-S prices them; undefined when one is on MIG slices, of another model or variant, or has no options (the profile does not model it). */
function modelledSiteW(instances: readonly PlannedInstance[], ranges: readonly GpuRange[], input: PlannerSInput, curves: ReadonlyMap<string, EntryCurves>, routedRps: (instance: string) => number): number | undefined {
  let watts = 0;
  for (const e of instances) {
    const c = e.model === input.model && e.variant === input.variant && !e.mig ? curves.get(`${gpuTypeAt(ranges, e.gpus[0] ?? -1)}|${mainClass(e.loadRps)}|${e.tp}`) : undefined;
    const mhz = c && clockOf(c, e.clock);
    if (mhz === undefined) return undefined;
    watts += e.replicas * c!.powerAt(mhz, routedRps(e.id) / e.replicas);
  }
  return watts;
}

/** The clock the model reads an instance at: its ceiling (`ceilingMhz`), when the profile has options there. */
function clockOf(curves: EntryCurves, clock: ClockSetting): number | undefined {
  const mhz = ceilingMhz(clock);
  return curves.clocks().includes(mhz) ? mhz : undefined;
}
