import type { ClassId } from "../../src/core/schemas/ids.ts";
import type { FleetPlanner, FleetWorkload } from "../../src/core/sim/fleet/fleet-types.ts";

/**
 * A planner that sees each class's highest rate over the period it plans (sampled every
 * `sampleS`, within the run) instead of the rate at the period's middle, which is what the fleet
 * simulator hands planners: Heron's Planner-L provisions for "each class's peak load" of the slot
 * and DynamoLLM's managers for the epoch's peak. A perfect forecast of that peak. `gpusHeld`
 * records the GPUs each plan puts in instances.
 *
 * @example
 * const planner = peakDemandPlanner(registryFleetPlanner(config, solver, scheme), workload, { durationS: 3540, sampleS: 60 });
 */
export function peakDemandPlanner(planner: FleetPlanner, workload: FleetWorkload, o: { durationS: number; sampleS: number }): FleetPlanner & { gpusHeld: number[] } {
  const gpusHeld: number[] = [];
  return {
    name: planner.name,
    cadenceS: planner.cadenceS,
    gpusHeld,
    plan(ctx) {
      const end = Math.min(o.durationS, ctx.nowS + ctx.periodS);
      const demandRps: Partial<Record<ClassId, number>> = {};
      for (const c of workload.classes) {
        let peak = 0;
        for (let t = ctx.nowS; t < end; t += o.sampleS) peak = Math.max(peak, workload.rateRps(t, c));
        demandRps[c] = peak;
      }
      const plan = planner.plan({ ...ctx, demandRps: demandRps as Record<ClassId, number> });
      gpusHeld.push(plan.sites.reduce((n, site) => n + site.instances.reduce((m, e) => m + e.replicas * e.tp, 0), 0));
      return plan;
    },
  };
}
