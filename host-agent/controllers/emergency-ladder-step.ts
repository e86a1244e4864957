import { emergencyLadder, type EmergencyAction, type EmergencyStep, type QueuedRequest } from "../../src/core/planning/dynamollm/emergency-ladder.ts";
import type { EmergencyDirective, RequestTracker } from "../telemetry/request-tracker.ts";

/** Prompt tokens assumed for a request whose length the gateway did not estimate. */
const DEFAULT_PROMPT_TOKENS = 512;

/** What the emergency ladder of one instance reads and acts through. */
export interface EmergencyView {
  requests: RequestTracker;
  /** Prefill time of a prompt of `tokens` on the instance at `mhz`, ms. */
  prefillMs(tokens: number, mhz: number): number;
  /** The TTFT objective of a class (the instance's own when undefined), ms. */
  ttftMs(classId: string | undefined): number;
  /** Other instances of the pool (same model and planned class) and the ms of queued work each can still take within deadlines. */
  peers(): { instance: string; spareMs: number }[];
  /** Requests waiting longer than this may be squashed (the edge retries them elsewhere). */
  squashAfterMs: number;
}

/**
 * One check of DynamoLLM's emergency ladder (§IV-D) for an instance: its requests still without a
 * first token, oldest first, each with its TTFT deadline and its prefill time at the clock now,
 * go through `emergencyLadder`; what the rung asks of requests still in the site queue (run
 * earliest deadline first, go to a peer of the pool, or be refused so the edge retries elsewhere)
 * becomes their directives, which the site gateway follows. Raising the clock is the caller's.
 *
 * @example
 * const { action, directives } = emergencyCheck("MM-tp1", view, previous, 1410, 1980);
 * view.requests.direct(directives);
 */
export function emergencyCheck(instanceId: string, view: EmergencyView, previous: EmergencyStep, mhz: number, maxMhz: number): { action: EmergencyAction; directives: Map<number, EmergencyDirective> } {
  const waiting = view.requests.inFlightOf(instanceId).filter((r) => r.awaitingFirstToken).sort((a, b) => b.ageMs - a.ageMs);
  const queue: QueuedRequest[] = waiting.map((r) => ({ id: String(r.id), waitedMs: r.ageMs, deadlineMs: view.ttftMs(r.classId) - r.ageMs, serviceMs: view.prefillMs(r.inputTokens ?? DEFAULT_PROMPT_TOKENS, mhz) }));
  const maxClockSpeedup = view.prefillMs(DEFAULT_PROMPT_TOKENS, mhz) / view.prefillMs(DEFAULT_PROMPT_TOKENS, maxMhz);
  const action = emergencyLadder({ queue, maxClockSpeedup, previous, peers: view.peers(), squashAfterMs: view.squashAfterMs });
  const queued = new Set(waiting.filter((r) => r.queued).map((r) => String(r.id)));
  const directives = new Map<number, EmergencyDirective>();
  const set = (id: string, d: EmergencyDirective) => queued.has(id) && directives.set(Number(id), { ...directives.get(Number(id)), ...d });
  if (action.step !== "none") action.order.forEach((id, rank) => set(id, { rank }));
  for (const r of action.resteer) set(r.id, { resteerTo: r.to });
  for (const id of action.squash) set(id, { squash: true });
  return { action, directives };
}
