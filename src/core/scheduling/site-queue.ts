import { QueueDiscipline } from "../schemas/plan.ts";
import { FREESH_LLF, laxity, llfWindowS, priorityOrder } from "../planning/freesh/llf.ts";

/** How a site's gateway picks the next waiting request (the plan's `QueueDiscipline`). */
export const SiteSchedulerKind = QueueDiscipline;
export type SiteSchedulerKind = QueueDiscipline;

/** A request held in the site queue. */
export interface WaitingRequest {
  id: number;
  arrivalMs: number;
  /** Predicted service time with no queueing (FREESH's Lat), ms. */
  isolatedMs: number;
  /** A rank set from outside (DynamoLLM's emergency ladder: earliest deadline first): ranked requests go first, in rank order. */
  rank?: number | undefined;
}

export interface SiteQueueOptions {
  policy: SiteSchedulerKind;
  /** Most requests held at once. */
  maxLength: number;
  /** Longest a request may wait for a replica, ms. */
  maxWaitMs: number;
  /** α_LLF: the deadline is arrival + α x Lat (default 1.4, FREESH). */
  llfAlpha?: number;
}

/** Why a request left the queue without being dispatched. */
export type QueueRejection = { reason: "queue_full" | "queue_timeout"; message: string };

/**
 * The waiting room of a site gateway. Pure: the caller passes the time, and places requests on
 * replicas itself (`dispatch` asks it, in policy order). Under LLF a request's laxity is
 * deadline - now - Lat with deadline = arrival + α·Lat (FREESH Eq. 6 before service starts), so
 * short requests overtake long ones while both have slack; `maxWaitMs` bounds how long any
 * request waits, so nothing starves silently.
 *
 * @example
 * const queue = new SiteQueue<WaitingRequest>({ policy: "llf", maxLength: 1024, maxWaitMs: 30_000 });
 * queue.offer({ id: 1, arrivalMs: now, isolatedMs: 800 });
 * for (const { request, placed } of queue.dispatch(now, (r) => freeReplicaFor(r))) start(request, placed);
 */
export class SiteQueue<R extends WaitingRequest> {
  private waiting: R[] = [];

  constructor(readonly options: SiteQueueOptions) {}

  /** Orders the queue by `policy` from now on (a plan's queue discipline replacing the site's default). */
  useDiscipline(policy: SiteSchedulerKind): void {
    this.options.policy = policy;
  }

  get length(): number {
    return this.waiting.length;
  }

  /** Holds `request`, or says why it cannot be held. */
  offer(request: R): QueueRejection | undefined {
    if (this.waiting.length >= this.options.maxLength) return { reason: "queue_full", message: `the site queue is full (${this.options.maxLength} requests waiting for a replica)` };
    this.waiting.push(request);
    return undefined;
  }

  /** Takes `id` out (its client went away); false when it was not waiting. */
  remove(id: number): boolean {
    const before = this.waiting.length;
    this.waiting = this.waiting.filter((r) => r.id !== id);
    return this.waiting.length < before;
  }

  /** Removes and returns the requests that have waited longer than `maxWaitMs`. */
  expire(nowMs: number): (R & { rejection: QueueRejection })[] {
    const limit = this.options.maxWaitMs;
    const late = this.waiting.filter((r) => nowMs - r.arrivalMs > limit);
    if (late.length === 0) return [];
    this.waiting = this.waiting.filter((r) => nowMs - r.arrivalMs <= limit);
    return late.map((r) => ({ ...r, rejection: { reason: "queue_timeout", message: `no replica was free within ${limit} ms (waited ${Math.round(nowMs - r.arrivalMs)} ms)` } }));
  }

  /** The waiting requests in the policy's order at `nowMs`, ranked ones (`rank`) first. */
  order(nowMs: number): R[] {
    const ranked = this.waiting.filter((r) => r.rank !== undefined).sort((a, b) => a.rank! - b.rank! || a.id - b.id);
    const rest = this.waiting.filter((r) => r.rank === undefined);
    if (this.options.policy === "fifo-rr") return [...ranked, ...rest.sort((a, b) => a.arrivalMs - b.arrivalMs || a.id - b.id)];
    const alpha = this.options.llfAlpha ?? FREESH_LLF.alpha;
    const asLlf = rest.map((r) => ({ arrivalS: r.arrivalMs / 1e3, windowS: llfWindowS(r.isolatedMs / 1e3, alpha), remainingS: r.isolatedMs / 1e3 }));
    const key = asLlf.map((r) => laxity(r, nowMs / 1e3));
    return [...ranked, ...priorityOrder(key, asLlf, new Set()).map((i) => rest[i]!)];
  }

  /**
   * Offers each waiting request, in policy order, to `place`; the ones it places (it returns
   * where) leave the queue. A request whose replicas are all busy is passed over, so one busy
   * instance does not hold up requests for another.
   */
  dispatch<P>(nowMs: number, place: (request: R) => P | undefined): { request: R; placed: P }[] {
    const out: { request: R; placed: P }[] = [];
    for (const request of this.order(nowMs)) {
      const placed = place(request);
      if (placed !== undefined) out.push({ request, placed });
    }
    if (out.length > 0) {
      const gone = new Set(out.map((o) => o.request.id));
      this.waiting = this.waiting.filter((r) => !gone.has(r.id));
    }
    return out;
  }
}
