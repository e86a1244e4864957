import type { Plan } from "../schemas/plan.ts";

/** What a plan or a correction was made for: its version, each site's power and each class's demand. */
export interface CorrectionBasis {
  version: number;
  /** The power each site was planned on (less what its meter read beyond the model, `unmodelledW`). */
  powerW: Record<string, number>;
  demandRps: Record<string, number>;
  /** Per site, the draw its meter read beyond what the model counts, taken off its power (`unmodelledDraw`); kept until the site's next settled reading. */
  unmodelledW?: Record<string, number>;
}

/** How far power and demand may move before Planner-S corrects: relative, with a floor for demand (small rates are noisy). */
export const CORRECTION_TOLERANCE = { power: 0.05, demand: 0.2, demandFloorRps: 0.5 };

/**
 * What a plan was made for, read from the plan itself: each site's power cap and each class's
 * demand (what it routes plus its shortfall).
 *
 * @example
 * basisOfPlan(plan); // { version: 7, powerW: { "wind-a": 120000 }, demandRps: { SS: 3.1 } }
 */
export function basisOfPlan(plan: Plan): CorrectionBasis {
  const demandRps: Record<string, number> = { ...plan.shortfall };
  for (const [c, targets] of Object.entries(plan.routing)) demandRps[c] = (demandRps[c] ?? 0) + (targets ?? []).reduce((s, t) => s + t.weight, 0);
  return { version: plan.version, powerW: Object.fromEntries(plan.sites.map((s) => [s.site, s.powerCapW])), demandRps };
}

/**
 * Why Planner-S should correct now: a site's power or a class's demand moved past the tolerance
 * since the basis (the plan's, or the last correction's); null when nothing did.
 *
 * @example
 * correctionReason(basis, { ...basis, powerW: { "wind-a": 60000 } }); // "wind-a power 120000 -> 60000 W"
 */
export function correctionReason(basis: CorrectionBasis, now: CorrectionBasis, tolerance = CORRECTION_TOLERANCE): string | null {
  const moves: string[] = [];
  for (const [site, w] of Object.entries(now.powerW)) {
    const before = basis.powerW[site];
    if (before !== undefined && Math.abs(w - before) > tolerance.power * Math.max(before, 1)) moves.push(`${site} power ${Math.round(before)} -> ${Math.round(w)} W`);
  }
  for (const [c, rps] of Object.entries(now.demandRps)) {
    const before = basis.demandRps[c] ?? 0;
    if (Math.abs(rps - before) > Math.max(tolerance.demand * before, tolerance.demandFloorRps)) moves.push(`${c} demand ${before.toFixed(2)} -> ${rps.toFixed(2)} req/s`);
  }
  return moves.length > 0 ? moves.join(", ") : null;
}
