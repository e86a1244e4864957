import type { LpSolver } from "../ports/lp-solver.ts";
import { assemblePlannerSInput } from "../planning/fleet-input.ts";
import type { Fleet } from "../schemas/fleet.ts";
import type { Forecast } from "../schemas/forecast.ts";
import type { Plan, PlanDelta } from "../schemas/plan.ts";
import type { ProfileRow } from "../schemas/profile.ts";
import type { SiteDraw } from "../routing/site-status.ts";
import type { PlannerSInput } from "../planning/heron/planner-s.ts";
import { basisOfPlan, correctionReason, type CorrectionBasis } from "./correction-basis.ts";
import { unmodelledDraw } from "./measured-draw.ts";
import type { PolicyEntry } from "./policy-entry.ts";

/** What one Planner-S step sees: the policy, the fleet, the plan as made, what the last correction was made for, and now. */
export interface CorrectionState {
  entry: PolicyEntry;
  fleet: Fleet;
  /** The current version as its fleet planner made it. */
  plan: Plan;
  /** What the correction in force was made for; null: the plan's own (`basisOfPlan`). */
  basis: CorrectionBasis | null;
  forecasts: readonly Forecast[];
  profile: ProfileRow[];
  /** Demand per class now, or undefined before enough was measured (then the basis's demand stands). */
  demandRps: Record<string, number> | undefined;
  /** Sites whose reconfiguration is under way: Planner-S leaves them as they are (Heron §4.2). */
  pendingSites: readonly string[];
  nowMs: number;
  /** The power a site can count on is read over [nowMs, nowMs + windowMs). */
  windowMs: number;
  /** A power forecast issued longer ago than this is stale (`siteConditions`' default unless set). */
  powerForecastMaxAgeMs?: number;
  /**
   * The sites' latest meter readings, the plan in force (with the correction in force) and when
   * that was made: a site is planned on its power less what it draws beyond the model (`unmodelledDraw`).
   */
  measured?: { draws: readonly SiteDraw[]; planInForce: Plan; inForceSinceMs: number };
}

export type CorrectionOutcome = { kind: "idle"; reason: string } | { kind: "corrected"; reason: string; delta: PlanDelta; notes: string[]; basis: CorrectionBasis };

/**
 * One Planner-S step: when a site's power or a class's demand moved past the tolerance since the
 * basis, the policy's corrector retunes clocks and weights of the plan as made (never instances);
 * otherwise nothing (a correction for the same inputs would be the same). A site's power is its
 * forecast or cap less what its meter reads beyond the profile's model (`measured`).
 *
 * @example
 * const step = correctionStep({ entry: POLICIES.heron, fleet, plan, basis, forecasts, profile, demandRps, pendingSites: [], nowMs, windowMs: 5000 }, solver);
 * if (step.kind === "corrected") await plans.correct(step.delta, nowMs);
 */
export function correctionStep(s: CorrectionState, solver: LpSolver): CorrectionOutcome {
  const corrector = s.entry.corrector;
  if (!corrector) return { kind: "idle", reason: `policy ${s.entry.kind} has no corrector` };
  if (s.profile.length === 0) return { kind: "idle", reason: "no profile table for the fleet" };
  const basis = s.basis?.version === s.plan.version ? s.basis : basisOfPlan(s.plan);
  const assembled = assemblePlannerSInput({ fleet: s.fleet, plan: s.plan, forecasts: s.forecasts, demandRps: s.demandRps ?? basis.demandRps, profile: s.profile, nowMs: s.nowMs, windowMs: s.windowMs, pendingSites: s.pendingSites, powerForecastMaxAgeMs: s.powerForecastMaxAgeMs });
  const { input, unmodelledW, drawNotes } = lessUnmodelledDraw(assembled, basis, s.measured);
  const now: CorrectionBasis = { version: s.plan.version, powerW: Object.fromEntries(input.sites.map((x) => [x.id, x.powerW])), demandRps: Object.fromEntries(input.classes.map((c) => [c.id, c.demandRps])), ...(Object.keys(unmodelledW).length > 0 ? { unmodelledW } : {}) };
  const reason = correctionReason(basis, now);
  if (!reason) return { kind: "idle", reason: "power and demand within tolerance of what the plan in force was made for" };
  const { delta, notes } = corrector.correct(input, solver, s.fleet.policy);
  const skipped = s.pendingSites.length > 0 ? [`left as they are (reconfiguring): ${s.pendingSites.join(", ")}`] : [];
  return { kind: "corrected", reason, delta, notes: [...notes, ...drawNotes, ...skipped], basis: now };
}

/**
 * Each site's power less what its meter reads beyond the model: from its settled reading when
 * there is one, else as the basis took it off (a correction just made is not yet measured).
 */
function lessUnmodelledDraw(input: PlannerSInput, basis: CorrectionBasis, measured: CorrectionState["measured"]): { input: PlannerSInput; unmodelledW: Record<string, number>; drawNotes: string[] } {
  const read = measured ? unmodelledDraw(input, measured.planInForce, measured.draws, measured.inForceSinceMs) : {};
  const unmodelledW: Record<string, number> = {};
  const drawNotes: string[] = [];
  const sites = input.sites.map((site) => {
    const excessW = read[site.id]?.excessW ?? basis.unmodelledW?.[site.id] ?? 0;
    if (excessW <= 0) return site;
    unmodelledW[site.id] = excessW;
    const m = read[site.id];
    if (m) drawNotes.push(`site ${site.id}: its meter reads ${Math.round(m.measuredW)} W where the profile models ${Math.round(m.modelledW)} W for its plan; planned on ${Math.round(Math.max(0, site.powerW - excessW))} of ${Math.round(site.powerW)} W`);
    return { ...site, powerW: Math.max(0, site.powerW - excessW) };
  });
  return { input: { ...input, sites }, unmodelledW, drawNotes };
}
