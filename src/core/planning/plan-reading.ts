import type { ClassId } from "../schemas/ids.ts";
import type { Plan } from "../schemas/plan.ts";

/** The instances a plan gives a site (none when the plan or site is absent). */
export function siteInstances(plan: Plan | undefined, site: string): Plan["sites"][number]["instances"] {
  return plan?.sites.find((s) => s.site === site)?.instances ?? [];
}

/** The class an instance serves most, or undefined when it has no planned load. */
export function mainClass(loadRps: Readonly<Record<string, number>>): ClassId | undefined {
  let best: string | undefined;
  for (const [c, rps] of Object.entries(loadRps)) if (rps > 0 && (best === undefined || rps > (loadRps[best] ?? 0))) best = c;
  return best as ClassId | undefined;
}
