import type { ClassScheme } from "../../schemas/request-class.ts";
import type { ClassId, ModelId, SiteId } from "../../schemas/ids.ts";
import type { PlanningContext } from "../fleet/fleet-types.ts";

/** Bins of each class id of a scheme (class id = input label + output label). */
export function classBins(scheme: ClassScheme): Map<string, { inputBin: number; outputBin: number }> {
  const bins = new Map<string, { inputBin: number; outputBin: number }>();
  scheme.inputLabels.forEach((il, inputBin) => scheme.outputLabels.forEach((ol, outputBin) => bins.set(il + ol, { inputBin, outputBin })));
  return bins;
}

/** The simulator's view of a moment as the planners' input shape (PlanningBase), unparsed. */
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
    profile: [...ctx.profile],
  };
}
