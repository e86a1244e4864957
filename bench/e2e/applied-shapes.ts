import type { Plan } from "../../src/core/schemas/plan.ts";

/** What the plans the agents applied held: every TP, role, variant, MIG profile and clock policy, sorted. */
export interface PlanShapes {
  tp: number[];
  roles: string[];
  variants: string[];
  mig_profiles: string[];
  clock_policies: string[];
}

/**
 * The shapes of `plans` (the ones agents applied): a clock counts as "locked" or its policy's name.
 *
 * @example
 * planShapes([plan]); // { tp: [1], roles: ["decode", "prefill"], variants: ["base"], mig_profiles: [], clock_policies: ["ecofreq"] }
 */
export function planShapes(plans: readonly Plan[]): PlanShapes {
  const instances = plans.flatMap((p) => p.sites.flatMap((s) => s.instances));
  const sorted = <T extends string | number>(xs: T[]) => [...new Set(xs)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return {
    tp: sorted(instances.map((i) => i.tp)),
    roles: sorted(instances.map((i) => i.role)),
    variants: sorted(instances.map((i) => i.variant as string)),
    mig_profiles: sorted(instances.flatMap((i) => (i.mig ? [i.mig] : []))),
    clock_policies: sorted(instances.map((i) => (i.clock.mode === "locked" ? "locked" : i.clock.policy))),
  };
}
