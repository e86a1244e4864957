import type { Plan, PlanDelta } from "../schemas/plan.ts";

/**
 * The plan with a Planner-S delta applied: new clocks for the instances it names and new target
 * lists for the classes it names; instances, TP and GPUs stay. A delta for another version is
 * ignored (returns the plan unchanged), as an agent would.
 */
export function applyDelta(plan: Plan, delta: PlanDelta): Plan {
  if (delta.baseVersion !== plan.version) return plan;
  const clocks = new Map(delta.clocks.map((c) => [`${c.site}/${c.instance}`, c.clock]));
  return {
    ...plan,
    sites: plan.sites.map((s) => ({ ...s, instances: s.instances.map((i) => ({ ...i, clock: clocks.get(`${s.site}/${i.id}`) ?? i.clock })) })),
    routing: { ...plan.routing, ...delta.routing },
  };
}
