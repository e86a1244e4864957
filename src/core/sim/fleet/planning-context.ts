import type { ClassId } from "../../schemas/ids.ts";
import type { Plan } from "../../schemas/plan.ts";
import type { FleetSimConfig, PlanningContext } from "./fleet-types.ts";
import { valueAt } from "./time-series.ts";

/**
 * What planners see at `t` in a fleet run: each site's power and carbon now, and the workload's
 * rate read at `demandAtS` (the middle of the coming period for Planner-L, now for a corrector;
 * the last step of the run at most).
 */
export function planningContextAt(cfg: FleetSimConfig, t: number, stepS: number, current: Plan | undefined, demandAtS?: number): PlanningContext {
  const periodS = cfg.planner.cadenceS;
  const mid = demandAtS ?? Math.min(cfg.durationS - stepS, t + periodS / 2);
  return {
    nowS: t,
    periodS,
    sites: cfg.sites.map((s) => ({ id: s.id, gpu: s.gpu, gpus: s.gpus, availableW: valueAt(s.power, t), carbonGPerKwh: valueAt(s.carbon, t) })),
    demandRps: Object.fromEntries(cfg.workload.classes.map((c) => [c, cfg.workload.rateRps(mid, c)])) as Record<ClassId, number>,
    profile: cfg.profile,
    slo: cfg.slo,
    model: cfg.model,
    ...(current ? { current } : {}),
  };
}
