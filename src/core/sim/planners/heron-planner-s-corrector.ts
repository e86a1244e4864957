import type { LpSolver } from "../../ports/lp-solver.ts";
import { heronPlannerS, PlannerSSlot, type PlannerSInput } from "../../planning/heron/planner-s.ts";
import type { ClassScheme } from "../../schemas/request-class.ts";
import type { FleetCorrector } from "../fleet/fleet-types.ts";
import { planningBase, validatedProfile } from "./planning-base.ts";

/**
 * Heron's Planner-S as the simulator's corrector: every `cadenceS` seconds it looks at each site's
 * power and each class's demand, and re-solves only when one of them moved by more than
 * `tolerance` (relative) since the last solve or since Planner-L's latest plan, which was made for
 * those inputs; the same inputs would give the same delta, so skipping them changes nothing but
 * the cost.
 */
export function heronPlannerSCorrector(solver: LpSolver, scheme: ClassScheme, o: { objective?: "min-latency" | "min-power"; cadenceS?: number; tolerance?: number } = {}): FleetCorrector & { solves: number } {
  const tolerance = o.tolerance ?? 0.01;
  let last: { version: number; inputs: number[] } | undefined;
  const corrector: FleetCorrector & { solves: number } = {
    name: `heron-planner-s (${o.objective ?? "min-latency"})`,
    cadenceS: o.cadenceS ?? 5,
    solves: 0,
    correct(ctx) {
      const inputs = [...ctx.sites.map((s) => s.availableW), ...Object.values(ctx.demandRps)];
      if (!last || last.version !== ctx.current.version) {
        last = { version: ctx.current.version, inputs };
        return undefined;
      }
      const moved = inputs.some((x, i) => Math.abs(x - last!.inputs[i]!) > tolerance * Math.max(1e-9, Math.abs(last!.inputs[i]!)));
      if (!moved) return undefined;
      last = { version: ctx.current.version, inputs };
      corrector.solves++;
      const input: PlannerSInput = { ...PlannerSSlot.parse(planningBase(ctx, scheme)), profile: validatedProfile(ctx.profile), plan: ctx.current };
      return heronPlannerS(input, solver, o.objective ?? "min-latency").delta;
    },
  };
  return corrector;
}
