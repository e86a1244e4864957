import { DurableObject } from "cloudflare:workers";
import { z } from "zod";
import { Fleet } from "../src/core/schemas/fleet.ts";

/** The name of the one global ControlDO. */
export const CONTROL_NAME = "global";

/** The global ControlDO's stub. */
export function controlStub(env: Env): DurableObjectStub<ControlDO> {
  return env.CONTROL.get(env.CONTROL.idFromName(CONTROL_NAME));
}

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

/** Thrown for a fleet that fails validation; the stored fleet is left as it was. */
export class InvalidFleetError extends Error {
  override name = "InvalidFleetError";
}

/**
 * The global control object: the fleet configuration and the history of cron runs. (The plan,
 * forecasts and the Planner-S loop come with the planner issues.)
 */
export class ControlDO extends DurableObject<Env> {
  private fleet: Fleet | null = null;
  private runs = new Map<string, CronRun[]>();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    void ctx.blockConcurrencyWhile(async () => {
      this.fleet = (await ctx.storage.get<Fleet>("fleet")) ?? null;
      for (const [key, runs] of await ctx.storage.list<CronRun[]>({ prefix: "cron:" })) this.runs.set(key.slice("cron:".length), runs);
    });
  }

  /** Validates and stores a new fleet, returning it with defaults filled; throws `InvalidFleetError` otherwise. */
  async setFleet(input: unknown): Promise<Fleet> {
    const parsed = Fleet.safeParse(input);
    if (!parsed.success) throw new InvalidFleetError(`invalid fleet: ${z.prettifyError(parsed.error)}`);
    await this.ctx.storage.put("fleet", parsed.data);
    this.fleet = parsed.data;
    return parsed.data;
  }

  /** The current fleet, or null before one was set. */
  getFleet(): Fleet | null {
    return this.fleet;
  }

  /** Appends a run to its handler's history, keeping the newest CRON_RUNS_KEPT. */
  async recordCronRun(name: string, scheduledTimeMs: number, outcome: CronOutcome): Promise<CronRun> {
    const run: CronRun = { name, scheduledTimeMs, recordedAtMs: Date.now(), ...CronOutcome.parse(outcome) };
    const runs = [run, ...(this.runs.get(name) ?? [])].slice(0, CRON_RUNS_KEPT);
    await this.ctx.storage.put(`cron:${name}`, runs);
    this.runs.set(name, runs);
    return run;
  }

  /** Recent runs per handler name, newest first. */
  cronRuns(): Record<string, CronRun[]> {
    return Object.fromEntries(this.runs);
  }
}
