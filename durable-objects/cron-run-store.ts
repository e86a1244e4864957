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

/** The recent runs of each cron handler (`cron:<name>`), newest first, CRON_RUNS_KEPT per handler. */
export class CronRunStore {
  private runs = new Map<string, CronRun[]>();

  constructor(private readonly storage: DurableObjectStorage) {}

  async load(): Promise<void> {
    this.runs = new Map([...(await this.storage.list<CronRun[]>({ prefix: PREFIX }))].map(([key, runs]) => [key.slice(PREFIX.length), runs]));
  }

  /** Appends a run to its handler's history. */
  async record(name: string, scheduledTimeMs: number, outcome: CronOutcome, nowMs: number): Promise<CronRun> {
    const run: CronRun = { name, scheduledTimeMs, recordedAtMs: nowMs, ...CronOutcome.parse(outcome) };
    const runs = [run, ...(this.runs.get(name) ?? [])].slice(0, CRON_RUNS_KEPT);
    await this.storage.put(`${PREFIX}${name}`, runs);
    this.runs.set(name, runs);
    return run;
  }

  /** Recent runs per handler name, newest first. */
  all(): Record<string, CronRun[]> {
    return Object.fromEntries(this.runs);
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
