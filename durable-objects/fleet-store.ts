import { z } from "zod";
import { Fleet, Policy, sameFleet, samePolicy } from "../src/core/schemas/fleet.ts";
import { failure, invalid, success, type Outcome } from "./outcome.ts";

/**
 * A stored change of the fleet (all of it, or its policy alone) and what it replaced: enough to
 * undo it exactly (`FleetStore.restore`) while the fleet is still at `revision`.
 */
export interface FleetChange {
  fleet: Fleet;
  revision: number;
  /** The fleet it replaced; null when it was the first. */
  previous: Fleet | null;
  /** `policyChangedAtMs` before the change. */
  previousPolicyChangedAtMs: number | null;
}

/** A change of the policy alone, which needs a fleet to change. */
export type PolicyChange = FleetChange & { previous: Fleet };

/** Thrown for a fleet that fails validation; the stored fleet is left as it was. */
export class InvalidFleetError extends Error {
  override name = "InvalidFleetError";
}

/**
 * ControlDO's fleet: the one the operator configured (null before the first, and again once a first
 * that could not plan was undone), its revision, which counts every change, and when its policy
 * (kind or weights) last changed; a fleet is stored only once it parses.
 */
export class FleetStore {
  private current: Fleet | null = null;
  private revisionCount = 0;
  private policyChangedMs: number | null = null;

  constructor(private readonly storage: DurableObjectStorage) {}

  async load(): Promise<void> {
    const stored = await this.storage.get(["fleet", "fleetRevision", "policyChangedAtMs"]);
    this.current = (stored.get("fleet") as Fleet | undefined) ?? null;
    this.revisionCount = (stored.get("fleetRevision") as number | undefined) ?? 0;
    this.policyChangedMs = (stored.get("policyChangedAtMs") as number | undefined) ?? null;
  }

  get fleet(): Fleet | null {
    return this.current;
  }

  get revision(): number {
    return this.revisionCount;
  }

  /**
   * When (ControlDO's clock) a change of the fleet last replaced its policy's kind or weights; null:
   * never since the first fleet. A plan stored before then was made under another policy.
   */
  get policyChangedAtMs(): number | null {
    return this.policyChangedMs;
  }

  /** Parses `input` as a fleet and stores it (at `nowMs`); throws `InvalidFleetError` for a bad one. */
  async set(input: unknown, nowMs: number): Promise<Fleet> {
    const parsed = Fleet.safeParse(input);
    if (!parsed.success) throw new InvalidFleetError(`invalid fleet: ${z.prettifyError(parsed.error)}`);
    await this.change(parsed.data, nowMs);
    return parsed.data;
  }

  /** Like `set`, but a bad fleet is a 400 outcome, and a stored one comes with what it replaced. */
  async put(input: unknown, nowMs: number): Promise<Outcome<FleetChange>> {
    const parsed = Fleet.safeParse(input);
    if (!parsed.success) return invalid("fleet", parsed.error);
    return success(await this.change(parsed.data, nowMs));
  }

  /** Replaces the fleet's policy and objective weights, answering what it replaced; 409 before there is a fleet. */
  async setPolicy(input: unknown, nowMs: number): Promise<Outcome<PolicyChange>> {
    const parsed = Policy.safeParse(input);
    if (!parsed.success) return invalid("policy", parsed.error);
    const previous = this.current;
    if (!previous) return failure(409, "no fleet is configured; PUT /admin/v1/fleet first");
    return success({ ...(await this.change({ ...previous, policy: parsed.data }, nowMs)), previous });
  }

  /**
   * Undoes `change` (compare-and-restore): only while the fleet is still at the revision the change
   * made, else 409 and the later change stays. The previous fleet comes back with its
   * `policyChangedAtMs`, so the undone change never counts as a change of policy (the cron neither
   * replans for it nor loses a replan still owed to an earlier change); undoing the first fleet
   * leaves none, as before it. The revision moves on rather than back: it keys the edge's routing
   * snapshot (`planKey`), and a number once given to a fleet is not reused.
   */
  async restore(change: FleetChange): Promise<Outcome<Fleet | null>> {
    if (this.revisionCount !== change.revision) {
      return failure(409, `the fleet changed (revision ${this.revisionCount}, not ${change.revision}) after this change was stored; the later change stays`);
    }
    await this.write(change.previous, change.previousPolicyChangedAtMs);
    return success(change.previous);
  }

  /**
   * Stores `fleet`, answering what it replaced; a new policy (kind or weights) is a change of policy
   * at `nowMs`. The fleet stored, sent again, is not written: a new revision would make every edge
   * isolate fetch its routing snapshot again for nothing.
   */
  private async change(fleet: Fleet, nowMs: number): Promise<FleetChange> {
    const previous = this.current;
    const previousPolicyChangedAtMs = this.policyChangedMs;
    if (previous && sameFleet(previous, fleet)) return { fleet, revision: this.revisionCount, previous, previousPolicyChangedAtMs };
    await this.write(fleet, previous && !samePolicy(previous.policy, fleet.policy) ? nowMs : previousPolicyChangedAtMs);
    return { fleet, revision: this.revisionCount, previous, previousPolicyChangedAtMs };
  }

  /** Stores `fleet` (null: none, as before the first) at the next revision. */
  private async write(fleet: Fleet | null, policyChangedAtMs: number | null): Promise<void> {
    const revision = this.revisionCount + 1;
    const gone = [...(fleet ? [] : ["fleet"]), ...(policyChangedAtMs === null ? ["policyChangedAtMs"] : [])];
    // No await between the writes: the Durable Object commits them together.
    const put = this.storage.put({ fleetRevision: revision, ...(fleet ? { fleet } : {}), ...(policyChangedAtMs === null ? {} : { policyChangedAtMs }) });
    await Promise.all([put, gone.length > 0 ? this.storage.delete(gone) : undefined]);
    this.current = fleet;
    this.revisionCount = revision;
    this.policyChangedMs = policyChangedAtMs;
  }
}
