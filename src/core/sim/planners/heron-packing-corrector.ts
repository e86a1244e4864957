import { heronPacking } from "../../planning/heron/packing.ts";
import type { ClassId } from "../../schemas/ids.ts";
import type { Plan } from "../../schemas/plan.ts";
import type { ClassScheme } from "../../schemas/request-class.ts";
import { applyDelta } from "../../planning/apply-delta.ts";
import type { FleetCorrector } from "../fleet/fleet-types.ts";
import { classBins } from "./planning-base.ts";

/**
 * Heron's packing heuristic (§4, Request Scheduler) in the simulator's corrector slot, after an
 * optional inner corrector (Planner-S): the plan before packing (Planner-L's, as the inner
 * corrector last changed it) is re-packed for the demand of the moment, so classes whose instances
 * expect more load than arrives take requests of smaller classes (`heronPacking`). Packing always
 * starts from that unpacked plan, never from its own last output; it emits nothing while neither
 * the plan nor any class's demand moved by more than `tolerance` (relative).
 *
 * @example
 * const corrector = heronPackingCorrector(scheme, { inner: heronPlannerSCorrector(solver, scheme) });
 */
export function heronPackingCorrector(scheme: ClassScheme, o: { inner?: FleetCorrector; cadenceS?: number; tolerance?: number } = {}): FleetCorrector & { movedRps: number } {
  const classes = [...classBins(scheme)].map(([id, bins]) => ({ id: id as ClassId, ...bins }));
  const tolerance = o.tolerance ?? 0.01;
  let base: Plan | undefined;
  let packedFor: number[] | undefined;
  const corrector: FleetCorrector & { movedRps: number } = {
    name: o.inner ? `${o.inner.name} + heron packing` : "heron packing",
    cadenceS: o.cadenceS ?? o.inner?.cadenceS ?? 5,
    movedRps: 0,
    correct(ctx) {
      if (!base || base.version !== ctx.current.version) {
        base = ctx.current;
        packedFor = undefined;
      }
      const inner = o.inner?.correct({ ...ctx, current: base });
      if (inner) {
        base = applyDelta(base, inner);
        packedFor = undefined;
      }
      const demand = classes.map((c) => ctx.demandRps[c.id] ?? 0);
      if (packedFor && demand.every((d, i) => Math.abs(d - packedFor![i]!) <= tolerance * Math.max(1e-9, packedFor![i]!))) return undefined;
      packedFor = demand;
      const { routing, moves } = heronPacking(base, classes, ctx.demandRps);
      corrector.movedRps = moves.reduce((s, m) => s + m.rps, 0);
      return { baseVersion: base.version, createdAtMs: Math.round(ctx.nowS * 1000), clocks: inner?.clocks ?? [], routing: { ...base.routing, ...routing } };
    },
  };
  return corrector;
}
