import { z } from "zod";
import { ProfileRow } from "../../schemas/profile.ts";
import type { ClassScheme } from "../../schemas/request-class.ts";
import type { ClassId, ModelId, SiteId } from "../../schemas/ids.ts";
import type { PlanningContext } from "../fleet/fleet-types.ts";

/** Bins of each class id of a scheme (class id = input label + output label). */
export function classBins(scheme: ClassScheme): Map<string, { inputBin: number; outputBin: number }> {
  const bins = new Map<string, { inputBin: number; outputBin: number }>();
  scheme.inputLabels.forEach((il, inputBin) => scheme.outputLabels.forEach((ol, outputBin) => bins.set(il + ol, { inputBin, outputBin })));
  return bins;
}

const ProfileTable = z.array(ProfileRow).min(1);
const validatedProfiles = new WeakMap<readonly ProfileRow[], ProfileRow[]>();

/**
 * A simulation's profile table, validated the first time a planner of the run sees it. The
 * simulator hands its planners the same table every slot, and with the plan in force (its own,
 * installed from a planner's typed output) it is what made re-parsing a whole PlanningInput every
 * slot cost more than planning on a large fleet; only the slot's own fields are parsed per slot
 * (`PlanningSlot`, `PlannerSSlot`).
 */
export function validatedProfile(rows: readonly ProfileRow[]): ProfileRow[] {
  let parsed = validatedProfiles.get(rows);
  if (!parsed) {
    parsed = ProfileTable.parse(rows);
    validatedProfiles.set(rows, parsed);
  }
  return parsed;
}

/** The simulator's view of a moment as the planners' input shape (PlanningBase without the profile), unparsed. */
export function planningBase(ctx: PlanningContext, scheme: ClassScheme) {
  const bins = classBins(scheme);
  return {
    nowMs: Math.round(ctx.nowS * 1000),
    model: ctx.model as ModelId,
    sites: ctx.sites.map((s) => ({ id: s.id as SiteId, gpus: [{ type: s.gpu.type, count: s.gpus }], powerW: s.availableW, carbonGPerKwh: s.carbonGPerKwh })),
    classes: Object.entries(ctx.demandRps).map(([id, demandRps]) => {
      const b = bins.get(id);
      if (!b) throw new Error(`class ${id} is not in scheme ${scheme.name}`);
      return { id: id as ClassId, ...b, tier: "interactive" as const, slo: ctx.slo[id as ClassId]!, demandRps };
    }),
  };
}
