import type { Fleet } from "../src/core/schemas/fleet.ts";
import type { ModelIdentity } from "../src/core/schemas/model-identity.ts";
import { Plan, type SitePlan } from "../src/core/schemas/plan.ts";
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

/** One site's slice of the current plan, as its agent pulls it. */
export interface SitePlanSlice {
  version: number;
  policy: Plan["policy"];
  createdAtMs: number;
  validUntilMs: number;
  /** Null when the plan runs nothing at this site (the agent stops its instances). */
  site: SitePlan | null;
  /** Per class, this site's instances and their weights. */
  routing: Plan["routing"];
  /** Per model the site runs: the name its engine serves, what it loads, its performance-model key. */
  models?: Record<string, ModelIdentity>;
}

const planKey = (version: number) => `plan:${String(version).padStart(12, "0")}`;

/**
 * The plan versions ControlDO holds: the current plan, the last PLANS_KEPT plans in full and a
 * summary of each. A plan is accepted only if it parses, fits the fleet and is newer than the current one.
 */
export class PlanStore {
  private current: Plan | null = null;
  private summaries: PlanSummary[] = [];

  constructor(private readonly storage: DurableObjectStorage) {}

  async load(): Promise<void> {
    this.current = (await this.storage.get<Plan>("plan")) ?? null;
    this.summaries = (await this.storage.get<PlanSummary[]>("planSummaries")) ?? [];
  }

  get plan(): Plan | null {
    return this.current;
  }

  get history(): PlanSummary[] {
    return this.summaries;
  }

  /** A kept plan by version. */
  async version(version: number): Promise<Plan | null> {
    if (this.current?.version === version) return this.current;
    return (await this.storage.get<Plan>(planKey(version))) ?? null;
  }

  /** The current plan's part for one site, or null before the first plan. */
  slice(site: string): SitePlanSlice | null {
    const plan = this.current;
    if (!plan) return null;
    const routing: Plan["routing"] = {};
    for (const [classId, targets] of Object.entries(plan.routing) as [keyof Plan["routing"], Plan["routing"][keyof Plan["routing"]]][]) {
      const mine = (targets ?? []).filter((t) => t.site === site);
      if (mine.length > 0) routing[classId] = mine;
    }
    const sitePlan = plan.sites.find((s) => s.site === site) ?? null;
    return { version: plan.version, policy: plan.policy, createdAtMs: plan.createdAtMs, validUntilMs: plan.validUntilMs, site: sitePlan, routing };
  }

  /** Validates and stores a new plan; 400 for a bad plan, 409 without a fleet or for a version that is not newer. */
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
    const summary = summarize(plan, nowMs);
    const summaries = [summary, ...this.summaries].slice(0, PLAN_SUMMARIES_KEPT);
    const dropped = summaries.length > PLANS_KEPT ? summaries[PLANS_KEPT]!.version : undefined;
    await this.storage.put({ plan, planSummaries: summaries, [planKey(plan.version)]: plan });
    if (dropped !== undefined) await this.storage.delete(planKey(dropped));
    this.current = plan;
    this.summaries = summaries;
    return success(summary);
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
