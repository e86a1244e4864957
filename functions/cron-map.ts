/**
 * Which handler each cron trigger in wrangler.toml runs. Kept free of Worker-only imports so a Node
 * test can check it against `[triggers] crons`.
 */
export const CRON_HANDLERS = {
  "*/5 * * * *": "forecast-refresh",
  "*/15 * * * *": "planner-long",
  "0 3 * * *": "history-compaction",
} as const;

export type CronHandlerName = (typeof CRON_HANDLERS)[keyof typeof CRON_HANDLERS];

/** The handler a cron expression runs, or undefined for an expression with none. */
export function handlerForCron(cron: string): CronHandlerName | undefined {
  return Object.hasOwn(CRON_HANDLERS, cron) ? CRON_HANDLERS[cron as keyof typeof CRON_HANDLERS] : undefined;
}
