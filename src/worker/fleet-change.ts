import { controlStub } from "../../durable-objects/control-do.ts";
import { success, type Outcome } from "../../durable-objects/outcome.ts";
import type { PlannerRun } from "../../functions/planner-long.ts";
import { sameFleet, samePlanningFleet, type Fleet } from "../core/schemas/fleet.ts";
import { planOrUndo } from "./planned-fleet-change.ts";

/** What `PUT /admin/v1/fleet` answers: the fleet stored (defaults filled), and the fleet planner's run on it. */
export type FleetReplacement = Fleet & { replan: PlannerRun };

const UNCHANGED: PlannerRun = { status: "skipped", message: "the fleet is unchanged; the plan in force stays" };
const MOVED: PlannerRun = { status: "skipped", message: "only where sites are reached changed, which routing reads from the fleet; the plan in force stays" };

/**
 * `PUT /admin/v1/fleet`: stores the whole fleet, sites and policy (a bad one is a 400 that changes
 * nothing) and, when it differs from the fleet it replaces in more than its sites' `ingressUrl`
 * (which routing reads from the fleet, and no planner), runs the fleet planner on it now under
 * its policy, logging the run as "fleet-change": the plan in force never lags a new fleet until the
 * cron's next run.
 *
 * All or nothing (see `planOrUndo`): when the planner cannot plan the new fleet (its policy's planner
 * throws, e.g. Clover where no variant fits a whole GPU, or makes a plan that does not fit), the
 * previous fleet is put back as it was and the answer is 422 `fleet_cannot_plan` (409 when another
 * request changed the fleet meanwhile). A first fleet that cannot plan is removed again: with no plan
 * and nothing to fall back on it would only stand half-configured. A run skipped for a want that is
 * not the fleet's (no profile, forecasts or demand yet) keeps the fleet and answers 200 with the run.
 */
export async function replaceFleet(env: Env, input: unknown): Promise<Outcome<FleetReplacement>> {
  const change = await controlStub(env).putFleet(input);
  if (!change.ok) return change;
  const { fleet, previous } = change.value;
  if (previous && sameFleet(previous, fleet)) return success({ ...fleet, replan: UNCHANGED });
  if (previous && samePlanningFleet(previous, fleet)) return success({ ...fleet, replan: MOVED });
  const run = await planOrUndo(env, change.value, {
    trigger: "fleet-change",
    refused: `this fleet cannot be planned under policy ${fleet.policy.kind}`,
    undone: previous ? "the change was undone; the previous fleet stays" : "the fleet was removed again; no fleet is configured, as before",
    code: "fleet_cannot_plan",
    // A change of the policy alone blames the policy; one of the sites (or more) the fleet as a whole.
    ...(previous && sameFleet({ ...fleet, policy: previous.policy }, previous) ? { param: "policy" } : {}),
  });
  return run.ok ? success({ ...fleet, replan: run.value }) : run;
}
