import { z } from "zod";
import { Fleet, Policy, samePolicy } from "../src/core/schemas/fleet.ts";
import { failure, invalid, success, type Outcome } from "./outcome.ts";

/**
 * A stored change of the fleet's policy and what it replaced: enough to undo it exactly
 * (`FleetStore.restorePolicy`) while the fleet is still at `revision`.
 */
export interface PolicyChange {
  policy: Policy;
  revision: number;
  previous: Policy;
  previousChangedAtMs: number | null;
}

/** Thrown for a fleet that fails validation; the stored fleet is left as it was. */
export class InvalidFleetError extends Error {
  override name = "InvalidFleetError";
}

/**
 * ControlDO's fleet: the one the operator configured (null before the first), its revision, which
 * counts every change, and when its policy (kind or weights) last changed; a fleet is stored only
 * once it parses.
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
    await this.store(parsed.data, nowMs);
    return parsed.data;
  }

  /** Like `set`, but a bad fleet is a 400 outcome. */
  async put(input: unknown, nowMs: number): Promise<Outcome<Fleet>> {
    const parsed = Fleet.safeParse(input);
    if (!parsed.success) return invalid("fleet", parsed.error);
    await this.store(parsed.data, nowMs);
    return success(parsed.data);
  }

  /** Replaces the fleet's policy and objective weights, answering what it replaced; 409 before there is a fleet. */
  async setPolicy(input: unknown, nowMs: number): Promise<Outcome<PolicyChange>> {
    const parsed = Policy.safeParse(input);
    if (!parsed.success) return invalid("policy", parsed.error);
    if (!this.current) return failure(409, "no fleet is configured; PUT /admin/v1/fleet first");
    const previous = this.current.policy;
    const previousChangedAtMs = this.policyChangedMs;
    await this.store({ ...this.current, policy: parsed.data }, nowMs);
    return success({ policy: parsed.data, revision: this.revisionCount, previous, previousChangedAtMs });
  }

  /**
   * Undoes `change` (compare-and-restore): only while the fleet is still at the revision the change
   * made, else 409 and the later change stays. The previous policy comes back with its
   * `policyChangedAtMs`, so the undone change never counts as one (the cron neither replans for it
   * nor loses a replan still owed to an earlier change). The revision moves on rather than back: it
   * keys the edge's routing snapshot (`planKey`), and a number once given to a fleet is not reused.
   */
  async restorePolicy(change: PolicyChange): Promise<Outcome<Policy>> {
    if (!this.current || this.revisionCount !== change.revision) {
      return failure(409, `the fleet changed (revision ${this.revisionCount}, not ${change.revision}) after the policy was set; the later change stays`);
    }
    await this.write({ ...this.current, policy: change.previous }, change.previousChangedAtMs);
    return success(change.previous);
  }

  private store(fleet: Fleet, nowMs: number): Promise<void> {
    return this.write(fleet, this.current && !samePolicy(this.current.policy, fleet.policy) ? nowMs : this.policyChangedMs);
  }

  private async write(fleet: Fleet, policyChangedAtMs: number | null): Promise<void> {
    const revision = this.revisionCount + 1;
    // No await between the two writes: the Durable Object commits them together.
    const put = this.storage.put({ fleet, fleetRevision: revision, ...(policyChangedAtMs === null ? {} : { policyChangedAtMs }) });
    await Promise.all([put, policyChangedAtMs === null ? this.storage.delete("policyChangedAtMs") : undefined]);
    this.current = fleet;
    this.revisionCount = revision;
    this.policyChangedMs = policyChangedAtMs;
  }
}
