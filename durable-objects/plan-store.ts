import { applyDelta } from "../src/core/planning/apply-delta.ts";
import { siteSlice } from "../src/core/planning/site-slice.ts";
import type { Fleet } from "../src/core/schemas/fleet.ts";
import { Plan, PlanDelta, PLAN_VERSION_STEP_MAX } from "../src/core/schemas/plan.ts";
import type { SitePlanSlice } from "../src/core/schemas/plan-slice.ts";
import { planAgainstFleet } from "../src/core/routing/plan-against-fleet.ts";
import { failure, invalid, success, type Outcome } from "./outcome.ts";

/** Full plans kept for the history view; older ones keep only their summary. */
export const PLANS_KEPT = 20;
/** Summaries kept. */
export const PLAN_SUMMARIES_KEPT = 500;

/** One line of plan history. */
export interface PlanSummary {
  version: number;
  policy: Plan["policy"];
  createdAtMs: number;
  validUntilMs: number;
  storedAtMs: number;
  sites: number;
  instances: number;
  shortfall: Plan["shortfall"];
  notes: string[];
}

export type { SitePlanSlice };

/** The Planner-S correction in force on top of the current plan: the delta and the revision it made. */
export interface StoredDelta {
  delta: PlanDelta;
  revision: number;
  storedAtMs: number;
}

const planKey = (version: number) => `plan:${String(version).padStart(12, "0")}`;

/**
 * The plan versions ControlDO holds: the current plan (as its planner made it, and with the
 * Planner-S correction in force applied), the last PLANS_KEPT plans in full and a summary of each.
 * A plan is accepted only if it parses, fits the fleet and is newer than the current one; a
 * correction only if it is to the current version.
 */
export class PlanStore {
  private made: Plan | null = null;
  private current: Plan | null = null;
  private correction: StoredDelta | null = null;
  private summaries: PlanSummary[] = [];

  constructor(private readonly storage: DurableObjectStorage) {}

  async load(): Promise<void> {
    this.made = (await this.storage.get<Plan>("plan")) ?? null;
    this.correction = (await this.storage.get<StoredDelta>("planDelta")) ?? null;
    this.current = this.made && this.correction ? corrected(this.made, this.correction) : this.made;
    this.summaries = (await this.storage.get<PlanSummary[]>("planSummaries")) ?? [];
  }

  /** The plan in force: the planner's, with the Planner-S correction applied (its `revision`). */
  get plan(): Plan | null {
    return this.current;
  }

  /** The current version as its fleet planner made it (revision 0): what Planner-S corrects. */
  get planned(): Plan | null {
    return this.made;
  }

  /** The correction in force, or null. */
  get delta(): StoredDelta | null {
    return this.correction;
  }

  /**
   * Makes `input` (a Planner-S delta to the current version) the correction in force, replacing the
   * last one: 400 for a bad delta or one that breaks the plan, 409 for another version.
   */
  async correct(input: unknown, nowMs: number): Promise<Outcome<StoredDelta>> {
    const parsed = PlanDelta.safeParse(input);
    if (!parsed.success) return invalid("plan delta", parsed.error);
    if (!this.made || parsed.data.baseVersion !== this.made.version) return failure(409, `the delta is to plan version ${parsed.data.baseVersion}, the current version is ${this.made?.version ?? "none"}`, "baseVersion");
    const stored: StoredDelta = { delta: parsed.data, revision: (this.correction?.revision ?? 0) + 1, storedAtMs: nowMs };
    const plan = Plan.safeParse(corrected(this.made, stored));
    if (!plan.success) return invalid("corrected plan", plan.error);
    await this.storage.put("planDelta", stored);
    this.correction = stored;
    this.current = plan.data;
    return success(stored);
  }

  get history(): PlanSummary[] {
    return this.summaries;
  }

  /** A kept plan by version. */
  async version(version: number): Promise<Plan | null> {
    if (this.current?.version === version) return this.current;
    return (await this.storage.get<Plan>(planKey(version))) ?? null;
  }

  /** A kept plan by version, or a 404 that says whether the version is yet to come or no longer kept, and which are. */
  async lookup(version: number): Promise<Outcome<Plan>> {
    const plan = await this.version(version);
    if (plan) return success(plan);
    const current = this.current?.version;
    if (current === undefined) return failure(404, "no plan has been made yet", "version", "not_found");
    if (version > current) return failure(404, `no plan version ${version} yet: the current version is ${current}`, "version", "not_found");
    const kept = this.summaries.slice(0, PLANS_KEPT).map((s) => s.version);
    const oldest = Math.min(current, ...kept);
    const range = oldest === current ? `only version ${current} is` : `versions ${oldest}-${current} are`;
    // Versions may skip (a plan may advance the version by up to PLAN_VERSION_STEP_MAX), so one inside the range may never have been made.
    const why = version < oldest ? `plan version ${version} is no longer kept` : `there was no plan version ${version} (versions may skip)`;
    return failure(404, `${why}; ${range} kept (the last ${PLANS_KEPT} plans; GET /admin/v1/plan/history lists them)`, "version", "plan_version_not_kept");
  }

  /** The current plan's part for one site, or null before the first plan. */
  slice(site: string): SitePlanSlice | null {
    return this.current ? siteSlice(this.current, site) : null;
  }

  /** Validates and stores a new plan; 400 for a bad plan or a version jump past PLAN_VERSION_STEP_MAX, 409 without a fleet or for a version that is not newer. */
  async put(input: unknown, fleet: Fleet | null, nowMs: number): Promise<Outcome<PlanSummary>> {
    const parsed = Plan.safeParse(input);
    if (!parsed.success) return invalid("plan", parsed.error);
    const plan = parsed.data;
    if (!fleet) return failure(409, "no fleet is configured; PUT /admin/v1/fleet first");
    const issues = planAgainstFleet(plan, fleet);
    if (issues.length > 0) return failure(400, `plan does not fit the fleet: ${issues.map((i) => `${i.message} at ${i.path}`).join("; ")}`, issues[0]!.path);
    if (this.current && plan.version <= this.current.version) {
      return failure(409, `plan version ${plan.version} is not newer than the current version ${this.current.version}`, "version");
    }
    const ceiling = (this.current?.version ?? 0) + PLAN_VERSION_STEP_MAX;
    if (plan.version > ceiling) return failure(400, `plan version ${plan.version} jumps more than ${PLAN_VERSION_STEP_MAX} past the current version (at most ${ceiling})`, "version");
    const summary = summarize(plan, nowMs);
    const summaries = [summary, ...this.summaries].slice(0, PLAN_SUMMARIES_KEPT);
    const dropped = summaries.length > PLANS_KEPT ? summaries[PLANS_KEPT]!.version : undefined;
    await this.storage.put({ plan, planSummaries: summaries, [planKey(plan.version)]: plan });
    await this.storage.delete(dropped !== undefined ? [planKey(dropped), "planDelta"] : ["planDelta"]);
    this.made = plan;
    this.current = plan;
    this.correction = null;
    this.summaries = summaries;
    return success(summary);
  }

  /**
   * Drops the summaries of plans stored before `sinceMs`, the current plan's excepted, and the full
   * copies kept of those plans (a full copy is otherwise deleted only when PLANS_KEPT newer plans
   * push its summary out, which a fleet that rarely replans may never do); returns how many.
   */
  async compactSummaries(sinceMs: number): Promise<number> {
    const current = this.current?.version;
    const isKept = (s: PlanSummary) => s.storedAtMs >= sinceMs || s.version === current;
    const kept = this.summaries.filter(isKept);
    const dropped = this.summaries.length - kept.length;
    if (dropped > 0) {
      const fullCopies = this.summaries.slice(0, PLANS_KEPT).filter((s) => !isKept(s));
      await this.storage.put("planSummaries", kept);
      if (fullCopies.length > 0) await this.storage.delete(fullCopies.map((s) => planKey(s.version)));
      this.summaries = kept;
    }
    return dropped;
  }
}

function summarize(plan: Plan, nowMs: number): PlanSummary {
  return {
    version: plan.version,
    policy: plan.policy,
    createdAtMs: plan.createdAtMs,
    validUntilMs: plan.validUntilMs,
    storedAtMs: nowMs,
    sites: plan.sites.length,
    instances: plan.sites.reduce((n, s) => n + s.instances.length, 0),
    shortfall: plan.shortfall,
    notes: plan.notes,
  };
}

/** The plan with a stored correction applied, at its revision. */
function corrected(plan: Plan, stored: StoredDelta): Plan {
  return { ...applyDelta(plan, stored.delta), revision: stored.revision };
}
