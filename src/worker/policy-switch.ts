import { controlStub } from "../../durable-objects/control-do.ts";
import { success, type Outcome } from "../../durable-objects/outcome.ts";
import type { PlannerRun } from "../../functions/planner-long.ts";
import { samePolicy, type Policy } from "../core/schemas/fleet.ts";
import { planOrUndo } from "./planned-fleet-change.ts";

/** What `PUT /admin/v1/policy` answers: the policy stored, and the fleet planner's run under it. */
export type PolicySwitch = Policy & { replan: PlannerRun };

const UNCHANGED: PlannerRun = { status: "skipped", message: "the policy is unchanged; the plan in force stays" };

/**
 * `PUT /admin/v1/policy`: stores the policy (a bad one is a 400 that changes nothing) and, when its
 * kind or weights changed, runs the fleet planner under it now, as `POST /admin/v1/replan` does,
 * logging the run as "policy-change": the new policy's plan goes to routing and the agents' plan
 * slices at once, not at the cron's next run.
 *
 * All or nothing (see `planOrUndo`): when the new policy's planner cannot plan the fleet (it throws or
 * makes a plan that does not fit the fleet), the previous policy is put back as it was and the answer
 * is 422 `policy_cannot_plan` (409 when another request changed the fleet meanwhile). A run that could
 * not plan for reasons that are not the policy's (`skipped`: no profile, forecasts or demand yet; a
 * solver that did not load; a plan the store refused) keeps the policy, answers 200 with the run, and
 * leaves the plan in force to the 5-minute cron, which plans at its next run.
 */
export async function switchPolicy(env: Env, input: unknown): Promise<Outcome<PolicySwitch>> {
  const change = await controlStub(env).setPolicy(input);
  if (!change.ok) return change;
  const policy = change.value.fleet.policy;
  const previous = change.value.previous.policy;
  if (samePolicy(previous, policy)) return success({ ...policy, replan: UNCHANGED });
  const run = await planOrUndo(env, change.value, {
    trigger: "policy-change",
    refused: `policy ${policy.kind} cannot plan this fleet`,
    undone: `the switch was undone; the policy in force stays ${previous.kind}`,
    code: "policy_cannot_plan",
    // The field to blame: the kind, or the weights when only they changed.
    param: policy.kind === previous.kind ? "weights" : "kind",
  });
  return run.ok ? success({ ...policy, replan: run.value }) : run;
}
