import type { OptionSet } from "../operating-options.ts";
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

/**
 * Heron §3.1 (C1) and §5.2: the baselines' per-site schedulers are not power-variability aware;
 * DynamoLLM "assumes infinite hardware and power availability as in a traditional DC". A site
 * then plans its WRR share as if every GPU could draw its most at any option, so the wind it
 * actually has never shapes the plan: when the wind falls below what the share asks, the site
 * (the simulator's power envelope) drops the excess instead of the router sending it elsewhere.
 *
 * @example
 * const local = { ...input, sites: [{ ...site, powerW: hardwarePowerW(site, sets) }] };
 */
export function hardwarePowerW(site: PlanningInput["sites"][number], sets: readonly OptionSet[]): number {
  return site.gpus.reduce((w, g) => w + g.count * Math.max(0, ...sets.filter((s) => s.gpu === g.type).flatMap((s) => s.options.map((o) => o.powerW / s.tp))), 0);
}
