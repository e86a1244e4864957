import { controlStub, type CronOutcome } from "../durable-objects/control-do.ts";
import { handlerForCron, type CronHandlerName } from "./cron-map.ts";

/** A scheduled handler: does its work and says how it went. Thrown errors are recorded as `error`. */
export type CronHandler = (env: Env, scheduledTimeMs: number) => Promise<CronOutcome>;

/**
 * The handlers. None of them does its real work yet: the forecast adapters and planners land in
 * later issues. Until then each reports `skipped` with what it will do, so the run history is honest.
 */
export const HANDLERS: Record<CronHandlerName, CronHandler> = {
  // Will pull carbon (Electricity Maps, WattTime, UK Carbon Intensity, replay) and site power
  // forecasts, falling back to persistence, and store them in ControlDO.
  "forecast-refresh": async () => ({ status: "skipped", message: "forecast adapters not implemented yet" }),
  // Will run Planner-L (or the selected policy's pool planner) over the forecasts and publish a new plan.
  "planner-long": async () => ({ status: "skipped", message: "long-horizon planner not implemented yet" }),
  // Will compact telemetry and forecast history older than a day into coarser aggregates.
  "history-compaction": async () => ({ status: "skipped", message: "history compaction not implemented yet" }),
};

/**
 * Runs the handler of `controller.cron` and records the run in ControlDO. An expression without a
 * handler is logged and recorded as an error under the name "unknown".
 */
export async function runScheduled(controller: ScheduledController, env: Env): Promise<void> {
  const name = handlerForCron(controller.cron);
  const control = controlStub(env);
  if (name === undefined) {
    console.error(`no handler for cron "${controller.cron}"`);
    await control.recordCronRun("unknown", controller.scheduledTime, { status: "error", message: `no handler for cron "${controller.cron}"` });
    return;
  }
  let outcome: CronOutcome;
  try {
    outcome = await HANDLERS[name](env, controller.scheduledTime);
  } catch (error) {
    console.error(`cron handler ${name} failed`, error);
    outcome = { status: "error", message: error instanceof Error ? error.message : String(error) };
  }
  await control.recordCronRun(name, controller.scheduledTime, outcome);
}
