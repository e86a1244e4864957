import type { LoadGenerator } from "../../cli/stack/load-generator.ts";
import { STREAM_CUT, type RequestOutcome } from "../../cli/stack/request-outcome.ts";

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

  constructor(private readonly load: LoadGenerator, private readonly o: { intervalMs: number; outputTokens: number; stream: (i: number) => boolean }) {}

  start(): this {
    this.timer = setInterval(() => this.sent.push(this.load.send(40, this.o.outputTokens, this.o.stream(this.sent.length))), this.o.intervalMs);
    return this;
  }

  /** Stops sending and waits for every answer. */
  async stop(): Promise<RequestOutcome[]> {
    clearInterval(this.timer);
    return Promise.all(this.sent);
  }
}

/** The matrix row of a fault injected at `faultAtMs` (wall clock) over the outcomes of its window. */
export function faultRow(name: string, outcomes: RequestOutcome[], faultAtMs: number, note?: string): FaultRow {
  const served = outcomes.filter((o) => o.ok).length;
  const lostCount = outcomes.filter(lost).length;
  const after = outcomes.filter((o) => o.startedMs >= faultAtMs).sort((a, b) => a.startedMs - b.startedMs);
  let lastFailed = -1;
  after.forEach((o, i) => (lastFailed = o.ok ? lastFailed : i));
  const recovery = lastFailed === -1 ? 0 : lastFailed === after.length - 1 ? null : (after[lastFailed + 1]!.startedMs - faultAtMs) / 1000;
  const bySite: Record<string, number> = {};
  for (const o of outcomes) if (o.ok) bySite[o.site ?? "?"] = (bySite[o.site ?? "?"] ?? 0) + 1;
  const reasons = [...new Set(outcomes.filter((o) => !o.ok).map((o) => `${o.status} ${(o.error ?? "no reason").slice(0, 160)}`))].slice(0, 5);
  return { name, requests: outcomes.length, served, lost: lostCount, errored_with_reason: outcomes.length - served - lostCount, recovery_s: recovery === null ? null : Math.round(recovery * 10) / 10, by_site: bySite, reasons, ...(note ? { note } : {}) };
}
