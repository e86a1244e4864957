import { controlStub } from "../../durable-objects/control-do.ts";
import { failure, success, type Outcome } from "../../durable-objects/outcome.ts";
import { defaultCronDeps } from "../../functions/cron-deps.ts";
import { cronOutcome, runPlannerLong, type PlannerRun } from "../../functions/planner-long.ts";
import { samePolicy, type Policy } from "../core/schemas/fleet.ts";

/** What `PUT /admin/v1/policy` answers: the policy stored, and the fleet planner's run under it. */
export type PolicySwitch = Policy & { replan: PlannerRun };

const UNCHANGED: PlannerRun = { status: "skipped", message: "the policy is unchanged; the plan in force stays" };

/**
 * `PUT /admin/v1/policy`: stores the policy (a bad one is a 400 that changes nothing) and, when its
 * kind or weights changed, runs the fleet planner under it now, as `POST /admin/v1/replan` does,
 * logging the run as "policy-change": the new policy's plan goes to routing and the agents' plan
 * slices at once, not at the cron's next run.
 *
 * All or nothing: when the new policy's planner cannot plan the fleet (`unplannable`: it throws or
 * makes a plan that does not fit the fleet), the previous
 * policy is put back as it was and the answer is 422 `policy_cannot_plan`; the run stays in the
 * history, marked undone. The put-back is a compare-and-restore: when another request changed the
 * fleet meanwhile, its change stays and the answer is 409. A run that could not plan for reasons
 * that are not the policy's (`skipped`: no profile, forecasts or demand yet; a solver that did not
 * load; a plan the store refused) keeps the policy, answers 200 with the run, and leaves the plan
 * in force to the 5-minute cron, which plans at its next run.
 */
export async function switchPolicy(env: Env, input: unknown): Promise<Outcome<PolicySwitch>> {
  const control = controlStub(env);
  const change = await control.setPolicy(input);
  if (!change.ok) return change;
  const { policy, previous } = change.value;
  if (samePolicy(previous, policy)) return success({ ...policy, replan: UNCHANGED });
  const nowMs = Date.now();
  const run = await runPlannerLong(env, nowMs, defaultCronDeps(), { force: true, policy });
  const outcome = cronOutcome(run);
  if (!run.unplannable) {
    await control.recordCronRun("policy-change", nowMs, outcome);
    return success({ ...policy, replan: run });
  }
  const restored = await control.restorePolicy(change.value);
  const why = `policy ${policy.kind} cannot plan this fleet: ${run.message}`;
  await control.recordCronRun("policy-change", nowMs, { ...outcome, message: `${run.message}; ${restored.ok ? `the switch was undone, ${previous.kind} stays` : "the fleet changed meanwhile"}` });
  // The field to blame: the kind, or the weights when only they changed.
  const param = policy.kind === previous.kind ? "weights" : "kind";
  if (!restored.ok) return failure(409, `${why}; ${restored.message}`, param);
  return failure(422, `${why}; the policy in force stays ${previous.kind}`, param, "policy_cannot_plan");
}
