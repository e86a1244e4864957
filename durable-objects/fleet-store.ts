import { z } from "zod";
import { Fleet, Policy, samePolicy } from "../src/core/schemas/fleet.ts";
import { failure, invalid, success, type Outcome } from "./outcome.ts";

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

  /** Replaces the fleet's policy and objective weights; 409 before there is a fleet. */
  async setPolicy(input: unknown, nowMs: number): Promise<Outcome<Policy>> {
    const parsed = Policy.safeParse(input);
    if (!parsed.success) return invalid("policy", parsed.error);
    if (!this.current) return failure(409, "no fleet is configured; PUT /admin/v1/fleet first");
    await this.store({ ...this.current, policy: parsed.data }, nowMs);
    return success(parsed.data);
  }

  private async store(fleet: Fleet, nowMs: number): Promise<void> {
    const revision = this.revisionCount + 1;
    const policyChangedAtMs = this.current && !samePolicy(this.current.policy, fleet.policy) ? nowMs : this.policyChangedMs;
    await this.storage.put({ fleet, fleetRevision: revision, ...(policyChangedAtMs === null ? {} : { policyChangedAtMs }) });
    this.current = fleet;
    this.revisionCount = revision;
    this.policyChangedMs = policyChangedAtMs;
  }
}
