import { z } from "zod";
import { reportDuplicates } from "../schemas/checks.ts";
import { EpochMs, GpuType, ModelId, SiteId, VariantId } from "../schemas/ids.ts";
import { Plan } from "../schemas/plan.ts";
import { ProfileRow } from "../schemas/profile.ts";
import { MeanRequest, RequestClass } from "../schemas/request-class.ts";

/** Heron's Planner-L period: 15 minutes. */
export const PLANNER_L_PERIOD_MS = 15 * 60 * 1000;

/** A site as a planner sees it for one slot: its GPUs and the power it can draw over the slot. */
export const PlanningSite = z.object({
  id: SiteId,
  gpus: z.array(z.object({ type: GpuType, count: z.number().int().positive() })).min(1),
  /** Power available over the slot at the wall (servers included), e.g. the wind forecast. */
  powerW: z.number().nonnegative(),
  /**
   * Carbon intensity of what the site draws over the slot, gCO2/kWh (a wind site: its life-cycle
   * intensity). Only carbon-aware planners read it.
   */
  carbonGPerKwh: z.number().nonnegative().optional(),
  /** Round trip from the edge to the site, ms (the fleet's estimate, averaged over edge regions). Only network-aware planners read it. */
  rttMs: z.number().nonnegative().optional(),
});
export type PlanningSite = z.infer<typeof PlanningSite>;

/**
 * A request class with its SLO and the load to plan for (Heron: the slot's peak, req/s), and its
 * mean request as the edge measured it since the last run, where it answered enough of them.
 */
export const PlanningClass = RequestClass.extend({ demandRps: z.number().nonnegative(), meanRequest: MeanRequest.optional() });
export type PlanningClass = z.infer<typeof PlanningClass>;

/** The fields every planning input shares: what is served, where, for whom (see `PlanningInput`). */
export const PlanningBase = z.object({
  nowMs: EpochMs,
  model: ModelId,
  variant: VariantId.default("base" as VariantId),
  /**
   * Variants of the model a planner may choose among, with their quality in [0, 1] (the fleet's
   * `ModelVariant.quality`); absent: only `variant`. Only variant-aware planners read it.
   */
  variants: z.array(z.object({ id: VariantId, quality: z.number().min(0).max(1) })).min(1).optional(),
  sites: z.array(PlanningSite).min(1),
  classes: z.array(PlanningClass).min(1),
  profile: z.array(ProfileRow).min(1),
});

/**
 * Everything a fleet planner needs for one slot: sites, classes with demand and SLO, the profile
 * table of the model served, and the plan in force (for reconfiguration budgets and stable GPU
 * placement). Parsed once at the boundary (cron handler, CLI, simulator), then passed inward.
 *
 * @example
 * const input = PlanningInput.parse({ version: 8, nowMs, model: "llama2-70b", sites, classes, profile: table.rows });
 */
export const PlanningInput = PlanningBase.extend({ ...slotFields(), previous: Plan.optional() }).superRefine(uniqueIds);
export type PlanningInput = z.infer<typeof PlanningInput>;

/**
 * A PlanningInput's fields that change from slot to slot (sites, classes and their demand), for a
 * caller that holds an already validated profile and plan in force: the fleet simulator (see
 * `validatedProfile` in `sim/planners/planning-base.ts`).
 */
export const PlanningSlot = PlanningBase.omit({ profile: true }).extend(slotFields()).superRefine(uniqueIds);

/** The plan's version and the period it is for. */
function slotFields() {
  return { version: z.number().int().nonnegative(), horizonMs: z.number().int().positive().default(PLANNER_L_PERIOD_MS) };
}

/** Site ids, GPU types per site and class ids must be unique. */
export function uniqueIds(input: Pick<z.infer<typeof PlanningBase>, "sites" | "classes">, ctx: z.RefinementCtx): void {
  reportDuplicates(ctx, input.sites.map((s) => s.id), (i) => ["sites", i, "id"], "site id");
  input.sites.forEach((s, i) => reportDuplicates(ctx, s.gpus.map((g) => g.type), (j) => ["sites", i, "gpus", j, "type"], "GPU type"));
  reportDuplicates(ctx, input.classes.map((c) => c.id), (i) => ["classes", i, "id"], "class id");
}
