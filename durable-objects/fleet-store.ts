import { z } from "zod";
import { Fleet, Policy } from "../src/core/schemas/fleet.ts";
import { failure, invalid, success, type Outcome } from "./outcome.ts";

/** Thrown for a fleet that fails validation; the stored fleet is left as it was. */
export class InvalidFleetError extends Error {
  override name = "InvalidFleetError";
}

/**
 * ControlDO's fleet: the one the operator configured (null before the first) and its revision,
 * which counts every change; a fleet is stored only once it parses.
 */
export class FleetStore {
  private current: Fleet | null = null;
  private revisionCount = 0;

  constructor(private readonly storage: DurableObjectStorage) {}

  async load(): Promise<void> {
    const stored = await this.storage.get(["fleet", "fleetRevision"]);
    this.current = (stored.get("fleet") as Fleet | undefined) ?? null;
    this.revisionCount = (stored.get("fleetRevision") as number | undefined) ?? 0;
  }

  get fleet(): Fleet | null {
    return this.current;
  }

  get revision(): number {
    return this.revisionCount;
  }

  /** Parses `input` as a fleet and stores it; throws `InvalidFleetError` for a bad one. */
  async set(input: unknown): Promise<Fleet> {
    const parsed = Fleet.safeParse(input);
    if (!parsed.success) throw new InvalidFleetError(`invalid fleet: ${z.prettifyError(parsed.error)}`);
    await this.store(parsed.data);
    return parsed.data;
  }

  /** Like `set`, but a bad fleet is a 400 outcome. */
  async put(input: unknown): Promise<Outcome<Fleet>> {
    const parsed = Fleet.safeParse(input);
    if (!parsed.success) return invalid("fleet", parsed.error);
    await this.store(parsed.data);
    return success(parsed.data);
  }

  /** Replaces the fleet's policy and objective weights; 409 before there is a fleet. */
  async setPolicy(input: unknown): Promise<Outcome<Policy>> {
    const parsed = Policy.safeParse(input);
    if (!parsed.success) return invalid("policy", parsed.error);
    if (!this.current) return failure(409, "no fleet is configured; PUT /admin/v1/fleet first");
    await this.store({ ...this.current, policy: parsed.data });
    return success(parsed.data);
  }

  private async store(fleet: Fleet): Promise<void> {
    const revision = this.revisionCount + 1;
    await this.storage.put({ fleet, fleetRevision: revision });
    this.current = fleet;
    this.revisionCount = revision;
  }
}
