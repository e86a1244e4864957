import type { Fleet } from "../schemas/fleet.ts";
import { paramText } from "../schemas/issue-param.ts";
import type { Plan } from "../schemas/plan.ts";

/** One way a plan does not fit the fleet, at a path into the plan (`paramText`: `sites[0].site`). */
export interface PlanIssue {
  path: string;
  message: string;
}

/**
 * Checks a (schema-valid) plan against the fleet it is meant for: every site is in the fleet,
 * every instance runs a known (model, variant) on GPU indices the site has, and every routed class
 * is a class of the fleet. Returns the issues, empty when the plan fits.
 *
 * @example
 * planAgainstFleet(plan, fleet); // [{ path: "sites[0].site", message: 'site "x" is not in the fleet' }]
 */
export function planAgainstFleet(plan: Plan, fleet: Fleet): PlanIssue[] {
  const issues: PlanIssue[] = [];
  const sites = new Map(fleet.sites.map((s) => [s.id as string, s]));
  const variants = new Set(fleet.variants.map((v) => `${v.model}/${v.id}`));
  plan.sites.forEach((sp, i) => {
    const site = sites.get(sp.site);
    if (!site) {
      issues.push({ path: paramText(["sites", i, "site"]), message: `site "${sp.site}" is not in the fleet` });
      return;
    }
    const gpuCount = site.gpus.reduce((n, g) => n + g.count, 0);
    sp.instances.forEach((inst, j) => {
      if (!variants.has(`${inst.model}/${inst.variant}`)) issues.push({ path: paramText(["sites", i, "instances", j, "variant"]), message: `no variant "${inst.variant}" of model "${inst.model}" in the fleet` });
      const bad = inst.gpus.find((g) => g >= gpuCount);
      if (bad !== undefined) issues.push({ path: paramText(["sites", i, "instances", j, "gpus"]), message: `GPU ${bad} does not exist at site "${sp.site}" (${gpuCount} GPUs)` });
    });
  });
  const classes = new Set<string>(fleet.classes.map((c) => c.id));
  for (const classId of Object.keys(plan.routing)) {
    if (!classes.has(classId)) issues.push({ path: paramText(["routing", classId]), message: `class "${classId}" is not a class of the fleet` });
  }
  return issues;
}
