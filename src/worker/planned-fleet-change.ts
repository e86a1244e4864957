import { controlStub, type FleetChange } from "../../durable-objects/control-do.ts";
import { failure, success, type Outcome } from "../../durable-objects/outcome.ts";
import { defaultCronDeps } from "../../functions/cron-deps.ts";
import { cronOutcome, runPlannerLong, type PlannerRun } from "../../functions/planner-long.ts";

/** How a change of the fleet names itself in the cron history and, when it is undone, in its refusal. */
export interface ChangeWording {
  /** The cron history's name for the change's runs ("policy-change", "fleet-change"). */
  trigger: string;
  /** What cannot plan, leading the refusal: "policy clover cannot plan this fleet". */
  refused: string;
  /** What the undo leaves, ending the refusal and the history's run: "the switch was undone; ...". */
  undone: string;
  /** The 422's `code`. */
  code: string;
  /** The field the refusal blames; none: the body as a whole. */
  param?: string;
}

/**
 * Plans a change of the fleet that a request has just stored, at once (`force`) and only under the
 * policy that request stored: a run that finds another request's policy in force is skipped, as that
 * request plans its own. The run is logged under `wording.trigger`.
 *
 * All or nothing: when the planner cannot plan the changed fleet (`unplannable`), the change is undone
 * by compare-and-restore (`ControlDO.restoreFleet`) and the answer is 422 `wording.code`, or 409 when
 * another request changed the fleet meanwhile (its change stays); the run stays in the history, marked
 * undone. Any other run, one that planned or was skipped for a want that is not the change's (no
 * profile, forecasts or demand yet), keeps the change and is the answer.
 */
export async function planOrUndo(env: Env, change: FleetChange, wording: ChangeWording): Promise<Outcome<PlannerRun>> {
  const control = controlStub(env);
  const nowMs = Date.now();
  const run = await runPlannerLong(env, nowMs, defaultCronDeps(), { force: true, policy: change.fleet.policy });
  if (!run.unplannable) {
    await control.recordCronRun(wording.trigger, nowMs, cronOutcome(run));
    return success(run);
  }
  const restored = await control.restoreFleet(change);
  await control.recordCronRun(wording.trigger, nowMs, { ...cronOutcome(run), message: `${run.message}; ${restored.ok ? wording.undone : "the fleet changed meanwhile"}` });
  const why = `${wording.refused}: ${run.message}`;
  if (!restored.ok) return failure(409, `${why}; ${restored.message}`, wording.param);
  return failure(422, `${why}; ${wording.undone}`, wording.param, wording.code);
}
