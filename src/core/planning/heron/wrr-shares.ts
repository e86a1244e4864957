import type { PlanningInput } from "../planning-input.ts";

/**
 * Heron §6 (c) and (d): a weighted round-robin router sends each site a fixed fraction of every
 * class, in proportion to its compute (GPUs), whatever power the site has. Returns demand per
 * [site][class].
 */
export function wrrSiteDemand(input: PlanningInput): number[][] {
  const gpus = input.sites.map((s) => s.gpus.reduce((n, g) => n + g.count, 0));
  const total = gpus.reduce((a, b) => a + b, 0);
  return input.sites.map((_, s) => input.classes.map((c) => (total > 0 ? (c.demandRps * gpus[s]!) / total : 0)));
}
