import { DEFAULT_RETENTION } from "../src/core/forecast/sample-compaction.ts";
import { controlStub, type CronOutcome, type HistoryRetention } from "../durable-objects/control-do.ts";

const DAY_MS = 24 * 3_600_000;

/** Forecast samples raw for a day and hourly for a week; cron runs and trigger firings a week; plan summaries 30 days. */
export const DEFAULT_HISTORY_RETENTION: HistoryRetention = {
  forecasts: DEFAULT_RETENTION,
  cronRunsMs: 7 * DAY_MS,
  planSummariesMs: 30 * DAY_MS,
  carbonTriggersMs: 7 * DAY_MS,
};

/** The daily compaction: drops and thins ControlDO's history beyond retention; `skipped` when nothing was old enough. */
export async function compactHistory(env: Env, nowMs: number, retention: HistoryRetention = DEFAULT_HISTORY_RETENTION): Promise<CronOutcome> {
  const out = await controlStub(env).compactHistory(nowMs, retention);
  const parts = Object.entries(out)
    .filter(([, n]) => n > 0)
    .map(([what, n]) => `${what} ${n}`);
  return parts.length === 0 ? { status: "skipped", message: "nothing beyond retention" } : { status: "ok", message: parts.join(", ") };
}
