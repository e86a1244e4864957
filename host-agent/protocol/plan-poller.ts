import { PeriodicTask, type PeriodicTaskTiming } from "../util/periodic-task.ts";
import { logsFailure } from "../util/backoff.ts";
import { EdgeError, type EdgeClient } from "./edge-client.ts";
import { planEtag } from "../../src/core/schemas/plan-slice.ts";
import { claimedRevision, claimedVersion } from "./plan-slice.ts";

export interface PlanPollerOptions extends PeriodicTaskTiming {
  edge: Pick<EdgeClient, "pullPlan">;
  /** Hands a new plan body to the applier (which validates it). */
  offer: (body: unknown) => void;
  /**
   * Told once, when a pull fails without the edge ever having answered since start (no answer,
   * or a 5xx): the agent then applies the plan its last run kept, until the edge answers.
   */
  unreachable?: (why: string) => void;
  /** Told after every pull, answered or not (the agent checks there whether its plan has expired). */
  afterPull?: () => void;
  log?: (message: string) => void;
}

/** Where plan pulling stands. */
export interface PlanPollStats {
  pulls: number;
  consecutiveFailures: number;
  lastError: string | null;
  /** Version of the last plan body received (valid or not). */
  lastVersionSeen: number | null;
  /** When the edge last answered a pull (a plan, 304 or none), ms since the epoch. */
  lastAnsweredAtMs: number | null;
}

/**
 * Pulls this site's plan slice every `intervalMs` with the ETag of the last plan received, so an
 * unchanged plan costs a 304. New bodies go to `offer`; a refused body is not offered again until
 * the edge has a new version. While the edge is unreachable the last plan stays applied and the
 * poller retries with exponential backoff; when it cannot be reached from the start, `unreachable`
 * is told once.
 *
 * @example
 * const poller = new PlanPoller({ edge, intervalMs: 5000, backoff: { baseMs: 1000, maxMs: 60_000 }, offer: (b) => applier.offer(b, "edge") });
 * poller.start();
 */
export class PlanPoller extends PeriodicTask {
  readonly stats: PlanPollStats = { pulls: 0, consecutiveFailures: 0, lastError: null, lastVersionSeen: null, lastAnsweredAtMs: null };
  private etag: string | undefined;
  /** The edge has answered a pull (a plan, none, or a refusal of its own) since start. */
  private reached = false;
  private toldUnreachable = false;

  constructor(private readonly options: PlanPollerOptions) {
    super(options);
  }

  protected attempt(signal: AbortSignal): Promise<boolean> {
    return this.pull(signal);
  }

  /** Pulls once now; returns whether the edge answered. A plan that arrives after `signal` aborts (the poller stopped) is not taken. */
  async pull(signal?: AbortSignal): Promise<boolean> {
    try {
      return await this.pullOnce(signal);
    } finally {
      this.options.afterPull?.();
    }
  }

  private async pullOnce(signal?: AbortSignal): Promise<boolean> {
    try {
      const pulled = await this.options.edge.pullPlan(this.etag);
      this.reached = true;
      this.stats.pulls++;
      this.stats.lastAnsweredAtMs = Date.now();
      this.stats.consecutiveFailures = 0;
      this.stats.lastError = null;
      if (pulled.kind === "plan" && !signal?.aborted) {
        const version = claimedVersion(pulled.body);
        this.stats.lastVersionSeen = version ?? null;
        this.etag = pulled.etag ?? (version === undefined ? undefined : planEtag(version, claimedRevision(pulled.body)));
        this.options.offer(pulled.body);
      }
      return true;
    } catch (error) {
      this.stats.consecutiveFailures++;
      this.stats.lastError = (error as Error).message;
      if (logsFailure(this.stats.consecutiveFailures)) this.options.log?.(`plan pull failed (${this.stats.consecutiveFailures} in a row; keeping the current plan): ${this.stats.lastError}`);
      this.noteFailure(error);
      return false;
    }
  }

  /** Tells `unreachable` of the first failure while the edge has not answered since start; a 4xx is an answer. */
  private noteFailure(error: unknown): void {
    const status = error instanceof EdgeError ? error.status : null;
    if (status !== null && status < 500) this.reached = true;
    if (this.reached || this.toldUnreachable) return;
    this.toldUnreachable = true;
    this.options.unreachable?.((error as Error).message);
  }
}
