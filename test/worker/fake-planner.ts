import type { PlanningInput } from "../../src/core/planning/planning-input.ts";
import type { FleetPlannerSpec } from "../../src/core/policies/policy-entry.ts";
import { POLICIES, type PolicyRegistry } from "../../src/core/policies/registry.ts";
import type { PolicyKind } from "../../src/core/schemas/fleet.ts";
import type { ProfileRow } from "../../src/core/schemas/profile.ts";

/** One profile row: enough for the wiring (the fake planner does not read it). */
export const PROFILE: ProfileRow[] = [
  {
    model: "m",
    variant: "base",
    gpu: "H100-80GB",
    tp: 1,
    mhz: 1980,
    classId: "AA" as never,
    loadRps: 1,
    ttftMs: { p50: 50, p99: 90 },
    tbtMs: { p50: 20, p99: 30 },
    e2eMs: { p50: 900, p99: 1500 },
    peakPowerW: 700,
    avgPowerW: 500,
    energyPerRequestJ: 400,
    stable: true,
  },
];

/**
 * A fleet planner that records its inputs and plans one TP1 instance per site with power, splitting
 * each class's demand evenly; `version` overrides the version it was asked for, `gpu` the GPU it plans on.
 */
export function fakePlanner(seen: PlanningInput[], over: { version?: number; fail?: boolean; cadenceMs?: number; gpu?: number } = {}): FleetPlannerSpec {
  return {
    name: "fake-planner-l",
    cadenceMs: over.cadenceMs ?? 15 * 60_000,
    create: () => ({
      plan(input) {
        seen.push(input);
        if (over.fail) throw new Error("solver blew up");
        const powered = input.sites.filter((s) => s.powerW > 0);
        const share = (c: PlanningInput["classes"][number]) => c.demandRps / Math.max(1, powered.length);
        return {
          plan: {
            version: over.version ?? input.version,
            createdAtMs: input.nowMs,
            validUntilMs: input.nowMs + input.horizonMs,
            policy: "heron",
            sites: powered.map((s) => ({
              site: s.id,
              powerCapW: s.powerW,
              instances: [{ id: "i0" as never, model: input.model, variant: input.variant, tp: 1, replicas: 1, gpus: [over.gpu ?? 0], role: "mixed", clock: { mode: "locked", mhz: 1980 }, loadRps: Object.fromEntries(input.classes.map((c) => [c.id, share(c)])) }],
            })),
            routing: Object.fromEntries(input.classes.map((c) => [c.id, powered.map((s) => ({ site: s.id, instance: "i0" as never, weight: 1 }))])),
            shortfall: {},
            notes: ["fake"],
          },
        };
      },
    }),
  };
}

/** The policy registry with one policy's fleet planner replaced (what tests pass in `CronDeps.policies`). */
export function withFleetPlanner(kind: PolicyKind, fleetPlanner: FleetPlannerSpec): PolicyRegistry {
  return { ...POLICIES, [kind]: { ...POLICIES[kind], fleetPlanner } };
}

/** `PROFILE` as the table `PUT /admin/v1/profile` takes. */
export const PROFILE_TABLE = { version: 1, source: { kind: "measured", details: {} }, rows: PROFILE };
