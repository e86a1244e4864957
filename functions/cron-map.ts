/**
 * Which handlers each cron trigger in wrangler.toml runs, in order. Kept free of Worker-only
 * imports so a Node test can check it against `[triggers] crons`. The fleet planner runs every 5
 * minutes and plans when its policy's cadence is due (see `runPlannerLong`).
 */
export const CRON_HANDLERS = {
  "*/5 * * * *": ["forecast-refresh", "planner-long"],
  "0 3 * * *": ["history-compaction"],
} as const;

export type CronHandlerName = (typeof CRON_HANDLERS)[keyof typeof CRON_HANDLERS][number];

/** The handlers a cron expression runs, or undefined for an expression with none. */
export function handlersForCron(cron: string): readonly CronHandlerName[] | undefined {
  return Object.hasOwn(CRON_HANDLERS, cron) ? CRON_HANDLERS[cron as keyof typeof CRON_HANDLERS] : undefined;
}
