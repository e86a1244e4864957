import type { VariantId } from "../../schemas/ids.ts";
import type { Allocation } from "../plan-assembly.ts";
import type { PlanningInput } from "../planning-input.ts";
import type { InstanceChoice } from "./instance-choice.ts";
import type { InstanceProblem } from "./instance-problem.ts";

/** The allocations of an integer plan: one per group in use, at its option's clock and load level. */
export function allocationsOf(input: PlanningInput, p: InstanceProblem, choice: InstanceChoice): Allocation[] {
  return p.groups.flatMap((g, gi) => {
    const opt = g.options[choice.option[gi] ?? -1];
    const count = choice.count[gi] ?? 0;
    if (!opt || count <= 0) return [];
    return [{ site: g.site, gpu: p.pools[g.pool]!.gpu, classId: input.classes[g.classIdx]!.id, tp: g.tp, variant: g.variant as VariantId, mhz: opt.mhz, loadRps: opt.loadRps, count }];
  });
}
