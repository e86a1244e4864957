import { EmergencyRung } from "../../schemas/telemetry.ts";

/** The rungs of DynamoLLM's emergency ladder (§IV-D "Handling mis-predictions"), lowest first; the ones above "none" are what heartbeats report. */
export const EMERGENCY_STEPS = ["none", ...EmergencyRung.options] as const;
export type EmergencyStep = "none" | EmergencyRung;

/** A request queued at the instance, not yet started. */
export interface QueuedRequest {
  id: string;
  /** How long it has waited, ms. */
  waitedMs: number;
  /** Time left until its TTFT deadline, ms. */
  deadlineMs: number;
  /** Its prefill time at the instance's current clock, ms. */
  serviceMs: number;
}

export interface EmergencyInput {
  /** The queue, in the order it would run. */
  queue: readonly QueuedRequest[];
  /** Service times at max clock are this many times shorter (from the profile; 1 when already at max). */
  maxClockSpeedup: number;
  /** The rung taken at the previous check: a rung above max-clock is climbed only while the backlog persists. */
  previous: EmergencyStep;
  /** Other instances of the pool and how many ms of queued work each can still take within deadlines. */
  peers: readonly { instance: string; spareMs: number }[];
  /** Requests waiting longer than this may be squashed (the user retries elsewhere). */
  squashAfterMs: number;
}

export interface EmergencyAction {
  step: EmergencyStep;
  /** The queue order to run (earliest deadline first from "reorder" up). */
  order: string[];
  maxClock: boolean;
  /** Requests moved to another instance of the pool (via the pool manager). */
  resteer: { id: string; to: string }[];
  /** Requests rejected so the frontend retries them in another pool or later. */
  squash: string[];
}

/**
 * DynamoLLM's emergency ladder for one instance at a check (every 5 s, or when a queue builds):
 * 1. re-order the queue, earliest deadline first, if that alone saves every deadline;
 * 2. else raise the clock to the maximum;
 * 3. if the backlog persists (the previous check already ran at max clock) or worsens, re-steer
 *    requests that would still miss to other instances of the pool with room;
 * 4. if that too was tried and requests still miss, squash those that have waited beyond the threshold.
 * Deadlines are checked as the instance would drain its queue, one prefill after another.
 *
 * @example
 * emergencyLadder({ queue, maxClockSpeedup: 1.4, previous: "none", peers: [], squashAfterMs: 2000 }).step; // "reorder"
 */
export function emergencyLadder(input: EmergencyInput): EmergencyAction {
  const fifo = input.queue.map((q) => q.id);
  const none: EmergencyAction = { step: "none", order: fifo, maxClock: false, resteer: [], squash: [] };
  if (misses(input.queue, 1).length === 0) return none;
  const edf = [...input.queue].sort((a, b) => a.deadlineMs - b.deadlineMs);
  const order = edf.map((q) => q.id);
  if (misses(edf, 1).length === 0) return { ...none, step: "reorder", order };
  const atMax = { ...none, step: "max-clock" as const, order, maxClock: true };
  const stillMissing = misses(edf, input.maxClockSpeedup);
  if (stillMissing.length === 0 || rank(input.previous) < rank("max-clock")) return atMax;

  const resteer: { id: string; to: string }[] = [];
  const spare = input.peers.map((p) => ({ ...p }));
  for (const q of stillMissing) {
    const peer = spare.filter((p) => p.spareMs >= q.serviceMs / input.maxClockSpeedup).sort((a, b) => b.spareMs - a.spareMs)[0];
    if (!peer) continue;
    peer.spareMs -= q.serviceMs / input.maxClockSpeedup;
    resteer.push({ id: q.id, to: peer.instance });
  }
  const moved = new Set(resteer.map((r) => r.id));
  const remaining = edf.filter((q) => !moved.has(q.id));
  const left = misses(remaining, input.maxClockSpeedup);
  const withResteer = { ...atMax, step: "re-steer" as const, order: remaining.map((q) => q.id), resteer };
  if (left.length === 0 || rank(input.previous) < rank("re-steer")) return withResteer;

  const squash = left.filter((q) => q.waitedMs > input.squashAfterMs).map((q) => q.id);
  const gone = new Set(squash);
  return { ...withResteer, step: "squash", order: withResteer.order.filter((id) => !gone.has(id)), squash };
}

/** Requests of a queue run in this order that finish after their deadline, with service times divided by `speedup`. */
function misses(queue: readonly QueuedRequest[], speedup: number): QueuedRequest[] {
  let t = 0;
  return queue.filter((q) => {
    t += q.serviceMs / speedup;
    return t > q.deadlineMs;
  });
}

function rank(step: EmergencyStep): number {
  return EMERGENCY_STEPS.indexOf(step);
}
