import { z } from "zod";

/** Runs kept per cron handler; older ones are dropped. */
export const CRON_RUNS_KEPT = 20;

/** How a scheduled run ended. `skipped` is a handler that ran but had nothing it could do yet. */
export const CronOutcome = z.object({
  status: z.enum(["ok", "skipped", "error"]),
  message: z.string().optional(),
});
export type CronOutcome = z.infer<typeof CronOutcome>;

export interface CronRun extends CronOutcome {
  name: string;
  scheduledTimeMs: number;
  recordedAtMs: number;
}

const PREFIX = "cron:";
const LAST_PREFIX = "cron-last:";

/** When a handler last ran, and last ran with status ok (null: never). */
export interface CronLast {
  lastRunMs: number;
  lastOkMs: number | null;
}

/**
 * The recent runs of each cron handler (`cron:<name>`), newest first, CRON_RUNS_KEPT per handler,
 * and when each last ran and last succeeded (`cron-last:<name>`), kept apart so that a handler
 * failing more than CRON_RUNS_KEPT times in a row, or past the runs' retention, still shows how
 * long ago it last succeeded: an alert on that age must not go quiet because its sample went absent.
 */
export class CronRunStore {
  private runs = new Map<string, CronRun[]>();
  private last = new Map<string, CronLast>();

  constructor(private readonly storage: DurableObjectStorage) {}

  async load(): Promise<void> {
    this.runs = new Map([...(await this.storage.list<CronRun[]>({ prefix: PREFIX }))].map(([key, runs]) => [key.slice(PREFIX.length), runs]));
    this.last = new Map([...(await this.storage.list<CronLast>({ prefix: LAST_PREFIX }))].map(([key, last]) => [key.slice(LAST_PREFIX.length), last]));
    // Storage written before `cron-last:` was kept: read it from the kept runs (newest first).
    for (const [name, runs] of this.runs) {
      if (!this.last.has(name) && runs[0]) this.last.set(name, { lastRunMs: runs[0].recordedAtMs, lastOkMs: runs.find((r) => r.status === "ok")?.recordedAtMs ?? null });
    }
  }

  /** Appends a run to its handler's history. */
  async record(name: string, scheduledTimeMs: number, outcome: CronOutcome, nowMs: number): Promise<CronRun> {
    const run: CronRun = { name, scheduledTimeMs, recordedAtMs: nowMs, ...CronOutcome.parse(outcome) };
    const runs = [run, ...(this.runs.get(name) ?? [])].slice(0, CRON_RUNS_KEPT);
    await this.storage.put(`${PREFIX}${name}`, runs);
    this.runs.set(name, runs);
    const last: CronLast = { lastRunMs: nowMs, lastOkMs: run.status === "ok" ? nowMs : (this.last.get(name)?.lastOkMs ?? null) };
    await this.storage.put(`${LAST_PREFIX}${name}`, last);
    this.last.set(name, last);
    return run;
  }

  /** Recent runs per handler name, newest first. */
  all(): Record<string, CronRun[]> {
    return Object.fromEntries(this.runs);
  }

  /** When each handler last ran and last succeeded, however long ago (not thinned by `compact`). */
  lastRuns(): ReadonlyMap<string, CronLast> {
    return this.last;
  }

  /** Drops runs scheduled before `sinceMs`; returns how many. */
  async compact(sinceMs: number): Promise<number> {
    let dropped = 0;
    for (const [name, runs] of [...this.runs]) {
      const kept = runs.filter((r) => r.scheduledTimeMs >= sinceMs);
      if (kept.length === runs.length) continue;
      dropped += runs.length - kept.length;
      if (kept.length > 0) this.runs.set(name, kept);
      else this.runs.delete(name);
      await (kept.length > 0 ? this.storage.put(`${PREFIX}${name}`, kept) : this.storage.delete(`${PREFIX}${name}`));
    }
    return dropped;
  }
}
