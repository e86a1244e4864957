import { controlStub, type CronOutcome } from "../durable-objects/control-do.ts";
import { defaultCronDeps, type CronDeps } from "./cron-deps.ts";
import { handlersForCron, type CronHandlerName } from "./cron-map.ts";
import { refreshForecasts } from "./forecast-refresh.ts";
import { compactHistory } from "./history-compaction.ts";
import { cronOutcome, runPlannerLong } from "./planner-long.ts";

/** A scheduled handler: does its work and says how it went. Thrown errors are recorded as `error`. */
export type CronHandler = (env: Env, scheduledTimeMs: number, deps: CronDeps) => Promise<CronOutcome>;

/** The handlers; `skipped` means there was nothing they could do yet (no fleet, no profile, not due...). */
export const HANDLERS: Record<CronHandlerName, CronHandler> = {
  // Carbon forecasts per site from its source, persistence on failure; the policy's carbon trigger.
  "forecast-refresh": refreshForecasts,
  // The fleet policy's planner from the registry, when its cadence is due; the plan store's version rules apply.
  "planner-long": async (env, t, deps) => cronOutcome(await runPlannerLong(env, t, deps)),
  // Forecast, plan, cron-run and trigger history beyond retention.
  "history-compaction": (env, t) => compactHistory(env, t),
};

/**
 * Runs the handlers of `controller.cron` one after another and records each run in ControlDO. An
 * expression without handlers is logged and recorded as an error under the name "unknown". Tests
 * pass `deps` (fake fetch, a policy registry of their own); the Worker uses the defaults.
 */
export async function runScheduled(controller: ScheduledController, env: Env, deps: CronDeps = defaultCronDeps()): Promise<void> {
  const names = handlersForCron(controller.cron);
  const control = controlStub(env);
  if (names === undefined) {
    console.error(`no handler for cron "${controller.cron}"`);
    await control.recordCronRun("unknown", controller.scheduledTime, { status: "error", message: `no handler for cron "${controller.cron}"` });
    return;
  }
  for (const name of names) {
    let outcome: CronOutcome;
    try {
      outcome = await HANDLERS[name](env, controller.scheduledTime, deps);
    } catch (error) {
      console.error(`cron handler ${name} failed`, error);
      outcome = { status: "error", message: error instanceof Error ? error.message : String(error) };
    }
    await control.recordCronRun(name, controller.scheduledTime, outcome);
  }
}
