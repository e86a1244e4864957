import type { LoadGenerator } from "../../lib/stack/load-generator.ts";
import { STREAM_CUT, type RequestOutcome } from "../../lib/stack/request-outcome.ts";

/**
 * What wrangler dev's proxy answers (503, `Retry-After: 0`) when its connection to the Worker
 * breaks before the Worker's answer arrives: a local-development hop that a deployed Worker does
 * not have. On a loaded machine its pooled connections to workerd break now and then, faults or not.
 */
export const DEV_PROXY_RESTART = "Your worker restarted mid-request.";

/** One row of the fault matrix. */
export interface FaultRow {
  name: string;
  requests: number;
  served: number;
  /** No answer, or a failure that does not say why (a stream cut without an error event). */
  lost: number;
  errored_with_reason: number;
  /** Seconds from the fault until every request sent from then on was served (0: none failed; null: never within the window). */
  recovery_s: number | null;
  /** Requests sent again, once, because wrangler dev's proxy answered DEV_PROXY_RESTART (as OpenAI's client retries a 503); each counts by its second answer. */
  dev_proxy_retries: number;
  /** Requests served per site, and the distinct reasons given for those that failed (the first five). */
  by_site: Record<string, number>;
  reasons: string[];
  note?: string;
}

/** Whether a failed request was answered with a reason. */
export function lost(o: RequestOutcome): boolean {
  return !o.ok && (o.status === 0 || !o.error || o.error === STREAM_CUT);
}

/**
 * Steady client traffic through the edge: one chat request every `intervalMs`, streamed when
 * `stream` says so for its index, each asking for `outputTokens`.
 */
export class Traffic {
  private readonly sent: Promise<RequestOutcome>[] = [];
  private timer: NodeJS.Timeout | undefined;
  /** Requests sent again after wrangler dev's proxy answered DEV_PROXY_RESTART. */
  devProxyRetries = 0;

  constructor(private readonly load: LoadGenerator, private readonly o: { intervalMs: number; inputTokens: number; outputTokens: number; stream: (i: number) => boolean }) {}

  start(): this {
    this.timer = setInterval(() => this.sent.push(this.send(this.o.stream(this.sent.length))), this.o.intervalMs);
    return this;
  }

  /** Stops sending and waits for every answer. */
  async stop(): Promise<RequestOutcome[]> {
    clearInterval(this.timer);
    return Promise.all(this.sent);
  }

  private async send(stream: boolean): Promise<RequestOutcome> {
    const first = await this.load.send(this.o.inputTokens, this.o.outputTokens, stream);
    if (!(first.status === 503 && first.error?.startsWith(DEV_PROXY_RESTART))) return first;
    this.devProxyRetries++;
    return { ...(await this.load.send(this.o.inputTokens, this.o.outputTokens, stream)), startedMs: first.startedMs };
  }
}

/** The matrix row of a fault injected at `faultAtMs` (wall clock) over the outcomes of its window. */
export function faultRow(name: string, outcomes: RequestOutcome[], faultAtMs: number, devProxyRetries: number, note?: string): FaultRow {
  const served = outcomes.filter((o) => o.ok).length;
  const lostCount = outcomes.filter(lost).length;
  const after = outcomes.filter((o) => o.startedMs >= faultAtMs).sort((a, b) => a.startedMs - b.startedMs);
  let lastFailed = -1;
  after.forEach((o, i) => (lastFailed = o.ok ? lastFailed : i));
  const recovery = lastFailed === -1 ? 0 : lastFailed === after.length - 1 ? null : (after[lastFailed + 1]!.startedMs - faultAtMs) / 1000;
  const bySite: Record<string, number> = {};
  for (const o of outcomes) if (o.ok) bySite[o.site ?? "?"] = (bySite[o.site ?? "?"] ?? 0) + 1;
  const reasons = [...new Set(outcomes.filter((o) => !o.ok).map((o) => `${o.status} ${(o.error ?? "no reason").slice(0, 160)}`))].slice(0, 5);
  return { name, requests: outcomes.length, served, lost: lostCount, errored_with_reason: outcomes.length - served - lostCount, recovery_s: recovery === null ? null : Math.round(recovery * 10) / 10, dev_proxy_retries: devProxyRetries, by_site: bySite, reasons, ...(note ? { note } : {}) };
}
