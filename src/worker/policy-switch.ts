import { controlStub } from "../../durable-objects/control-do.ts";
import { success, type Outcome } from "../../durable-objects/outcome.ts";
import { defaultCronDeps } from "../../functions/cron-deps.ts";
import { runPlannerLong, type PlannerRun } from "../../functions/planner-long.ts";
import { samePolicy, type Policy } from "../core/schemas/fleet.ts";

/** What `PUT /admin/v1/policy` answers: the policy stored, and the fleet planner's run under it. */
export type PolicySwitch = Policy & { replan: PlannerRun };

const UNCHANGED: PlannerRun = { status: "skipped", message: "the policy is unchanged; the plan in force stays" };

/**
 * `PUT /admin/v1/policy`: stores the policy (a bad one is a 400 that changes nothing) and, when its
 * kind or weights changed, runs the fleet planner under it now, as `POST /admin/v1/replan` does,
 * logging the run as "policy-change": the new policy's plan goes to routing and the agents' plan
 * slices at once, not at the cron's next run. A run that could not plan (`skipped`, `error`) leaves
 * the plan in force, and the 5-minute cron plans at its next run (the plan in force was made
 * before the change). The answer is 200 with the run either way.
 */
export async function switchPolicy(env: Env, input: unknown): Promise<Outcome<PolicySwitch>> {
  const control = controlStub(env);
  const before = (await control.getFleet())?.policy ?? null;
  const stored = await control.setPolicy(input);
  if (!stored.ok) return stored;
  if (before && samePolicy(before, stored.value)) return success({ ...stored.value, replan: UNCHANGED });
  const nowMs = Date.now();
  const run = await runPlannerLong(env, nowMs, defaultCronDeps(), { force: true });
  const { plan: _plan, ...outcome } = run;
  await control.recordCronRun("policy-change", nowMs, outcome);
  return success({ ...stored.value, replan: run });
}
