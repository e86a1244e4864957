import type { ClassId } from "../../schemas/ids.ts";
import { ReplicaTurns } from "../../scheduling/replica-turns.ts";
import { SiteQueue, type WaitingRequest } from "../../scheduling/site-queue.ts";
import { PlanReplicas } from "./plan-replicas.ts";
import type { Replica } from "./replica.ts";

/** A request the site holds until a replica has a free slot for it. */
export interface HeldRequest extends WaitingRequest {
  entryKey: string;
  classId: ClassId;
}

/** The replicas a request may go to now, and the group whose turns choose among them. */
export interface GatewayTarget {
  group: string;
  replicas: Replica[];
}

export interface SimGatewayOptions {
  /** Requests in flight per replica before more wait in the site queue (the agent's `gatewayReplicaConcurrency`). */
  replicaConcurrency: number;
  /** Most requests the site queue holds. */
  queueMax: number;
  /** Longest a request waits in the site queue. */
  queueWaitMs: number;
}

/**
 * A site's gateway as the host agent runs it, on simulated replicas: a request for a plan entry
 * goes to that entry's up replicas; while they are starting, to the replicas of the model the
 * earlier plan hands over (make-before-break: they stand in for what replaces them); failing
 * those, to the other entries the plan routes its class
 * to at the site; while those are all starting, to any up replica of the model (the replicas a
 * plan change hands over included), as `resolveTarget` does. Replicas take turns (`ReplicaTurns`)
 * up to `replicaConcurrency` requests each; the rest wait in the site queue (`SiteQueue`, in the
 * plan's queue discipline: FIFO, or least laxity first) up to `queueWaitMs`. Under the plan's
 * `join-idle` balance, a request whose entry has requests waiting for admission at every replica
 * goes to a replica with none waiting of another entry of its class, else of its model, as the
 * agent's gateway does from its engines' queue gauges (here read the instant it decides).
 */
export class SimSiteGateway {
  readonly queue: SiteQueue<HeldRequest>;
  /** Requests held in the queue per entry (its instance's `waiting` in telemetry). */
  readonly heldByEntry = new Map<string, number>();
  private readonly turns = new ReplicaTurns();

  constructor(
    readonly siteId: string,
    private readonly plan: PlanReplicas,
    private readonly options: SimGatewayOptions,
  ) {
    this.queue = new SiteQueue<HeldRequest>({ policy: "fifo-rr", maxLength: options.queueMax, maxWaitMs: options.queueWaitMs });
  }

  /** Orders the site queue as the plan in force asks (FIFO where it says nothing), as the agent's gateway does. */
  followPlan(): void {
    this.queue.useDiscipline(this.plan.gateway.get(this.siteId)?.queue ?? "fifo-rr");
  }

  /** Where a request for `entryKey` of class `classId` may go at `t`; undefined when nothing at the site can take it (the edge tries elsewhere). */
  resolve(entryKey: string, classId: ClassId, model: string, t: number): GatewayTarget | undefined {
    const entry = this.plan.entries.get(entryKey);
    const own = entry?.replicas.filter((r) => r.accepting(t)) ?? [];
    if (own.length > 0) return (this.plan.gateway.get(this.siteId)?.balance === "join-idle" && this.joinIdle(entryKey, classId, model, own, t)) || { group: entryKey, replicas: own };
    if (entry && PlanReplicas.awaited(entry, t)) {
      const handover = this.plan.handoverReplicas(this.siteId, model, t);
      if (handover.length > 0) return { group: `handover:${model}`, replicas: handover };
    }
    const serving = (this.plan.classEntries.get(this.siteId)?.get(classId) ?? []).filter((e) => e.key !== entryKey && e.model === model);
    const others = serving.flatMap((e) => e.replicas.filter((r) => r.accepting(t)));
    if (others.length > 0) return { group: `class:${classId}`, replicas: others };
    const awaited = [...(entry ? [entry] : []), ...serving].some((e) => PlanReplicas.awaited(e, t));
    if (!awaited) return undefined;
    const standIns = this.plan.bySite.get(this.siteId)!.filter((r) => r.model === model && r.accepting(t));
    return standIns.length > 0 ? { group: `standin:${model}`, replicas: standIns } : undefined;
  }

  /**
   * `join-idle`: when every one of `own` has requests waiting for admission, the accepting replicas
   * with none waiting and a free slot of the class's other entries here, else of the model's other
   * entries here; undefined otherwise.
   */
  private joinIdle(entryKey: string, classId: ClassId, model: string, own: readonly Replica[], t: number): GatewayTarget | undefined {
    if (!own.every((r) => r.engine.load.waiting > 0)) return undefined;
    const idle = (r: Replica) => r.entryKey !== entryKey && r.model === model && r.accepting(t) && r.engine.load.waiting === 0 && r.inFlight < this.options.replicaConcurrency;
    const ofClass = (this.plan.classEntries.get(this.siteId)?.get(classId) ?? []).flatMap((e) => e.replicas.filter(idle));
    if (ofClass.length > 0) return { group: `idle:${classId}`, replicas: ofClass };
    const ofModel = (this.plan.bySite.get(this.siteId) ?? []).filter(idle);
    return ofModel.length > 0 ? { group: `idle:${model}`, replicas: ofModel } : undefined;
  }

  /** The target's next replica in turn with a free slot, or undefined when all are full. */
  pick(target: GatewayTarget): Replica | undefined {
    const slots = target.replicas.map((r) => ({ key: String(r.id), free: this.options.replicaConcurrency - r.inFlight }));
    const key = this.turns.pick(target.group, slots);
    return key === undefined ? undefined : target.replicas.find((r) => String(r.id) === key);
  }

  hold(request: HeldRequest): boolean {
    if (this.queue.offer(request)) return false;
    this.heldByEntry.set(request.entryKey, (this.heldByEntry.get(request.entryKey) ?? 0) + 1);
    return true;
  }

  /** Notes that a held request left the queue (placed or expired). */
  released(request: HeldRequest): void {
    this.heldByEntry.set(request.entryKey, (this.heldByEntry.get(request.entryKey) ?? 1) - 1);
  }
}
