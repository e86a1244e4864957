import { SERVER_POWER_OVERHEAD } from "../../src/core/model/power.ts";
import type { EmergencyStep } from "../../src/core/planning/dynamollm/emergency-ladder.ts";
import type { z } from "zod";
import { Telemetry, type EmergencyStanding, type PrefillHandoffCounts, type SloCounters } from "../../src/core/schemas/telemetry.ts";
import type { GpuReading, InstanceReading } from "./readings.ts";

export interface TelemetryInput {
  site: string;
  sentAtMs: number;
  appliedPlanVersion: number | null;
  gpus: readonly GpuReading[];
  instances: readonly InstanceReading[];
  /** Reconfiguration steps not yet done (1 while the applier works on a plan). */
  pendingReconfigurations: number;
  /**
   * Site power = GPU power x this factor where the site has no meter reading. Default Heron's
   * 1.82 (a DGX H100 draws 1.82x its GPUs' power; see src/core/model/power.ts).
   */
  serverOverhead?: number;
  /** A metered site power, W, when the operator has one. */
  meteredSitePowerW?: number;
  /** Where the agent's power ladder stands. */
  powerLadder?: { level: number; step: string };
  /** The request log's running SLO counts per class, and when counting began. */
  sloCounts?: SloCounters;
  /** Jain's fairness over the window's finished requests (NaN: too few, left out). */
  fairness?: number;
  /** The site gateway's prefill/decode handoff counts, where it runs. */
  prefillHandoffs?: PrefillHandoffCounts;
  /** Where instance managers run the emergency ladder: the instances where it stands. */
  emergencies?: readonly z.input<typeof EmergencyStanding>[];
  /** Clock controllers that could not start, and why. */
  unstartedControllers?: readonly { instance: string; policy: string; reason: string }[];
}

/**
 * The heartbeat the edge expects (`Telemetry`), validated so a bug shows here rather than as a 400
 * at the edge. Energy counters are the drivers' cumulative joules, sent in millijoules.
 *
 * @example
 * const t = buildTelemetry({ site: "wind-a", sentAtMs: Date.now(), appliedPlanVersion: 3, gpus, instances, pendingReconfigurations: 0 });
 */
export function buildTelemetry(input: TelemetryInput): Telemetry {
  const gpuPowerW = input.gpus.reduce((sum, g) => sum + g.powerW, 0);
  return Telemetry.parse({
    site: input.site,
    sentAtMs: Math.round(input.sentAtMs),
    appliedPlanVersion: input.appliedPlanVersion,
    sitePowerW: input.meteredSitePowerW ?? gpuPowerW * (input.serverOverhead ?? SERVER_POWER_OVERHEAD),
    gpus: input.gpus.map((g) => ({
      index: g.index,
      type: g.type,
      powerW: g.powerW,
      energyMj: g.energyJ * 1e3,
      smClockMhz: g.smClockMhz,
      lockedClockMhz: g.lockedClockMhz,
      health: g.health,
    })),
    instances: input.instances.map((i) => ({
      id: i.id,
      state: i.state,
      ...(i.covered ? { covered: true } : {}),
      ...(i.unresponsive > 0 ? { unresponsive: i.unresponsive } : {}),
      ...(i.unread > 0 ? { unread: i.unread } : {}),
      // Waiting for admission as routing reads it: in the engines' queues and the site gateway's.
      waiting: Math.round(i.waiting + i.held),
      running: Math.round(i.running),
      kvUse: Math.min(1, Math.max(0, i.kvUse)),
      servedRps: i.served.servedRps,
      ...(i.served.ttftMs ? { ttftMs: i.served.ttftMs } : {}),
      ...(i.served.tbtMs ? { tbtMs: i.served.tbtMs } : {}),
    })),
    pendingReconfigurations: input.pendingReconfigurations,
    ...(input.powerLadder ? { powerLadder: { level: input.powerLadder.level, step: input.powerLadder.step } } : {}),
    ...(input.sloCounts ? { sloCounts: input.sloCounts } : {}),
    ...(input.fairness !== undefined && Number.isFinite(input.fairness) ? { fairness: input.fairness } : {}),
    ...(input.prefillHandoffs ? { prefillHandoffs: input.prefillHandoffs } : {}),
    ...(input.emergencies ? { emergencies: input.emergencies.slice(0, 256) } : {}),
    ...(input.unstartedControllers?.length ? { controllerFaults: input.unstartedControllers.slice(0, 256).map((c) => ({ instance: c.instance, policy: c.policy, reason: c.reason.slice(0, 500) })) } : {}),
  });
}

/**
 * The heartbeat's `emergencies`: where instance managers run DynamoLLM's emergency ladder (their
 * status names a rung), the instances where it stands, with what the site gateway holds for each
 * (`held`); undefined where none runs.
 *
 * @example
 * emergencyStandings([{ instance: "im", emergency: "max-clock" }], () => 12); // [{ instance: "im", step: "max-clock", held: 12 }]
 */
export function emergencyStandings(controllers: readonly { instance: string; emergency?: EmergencyStep }[], held: (instance: string) => number): z.input<typeof EmergencyStanding>[] | undefined {
  if (!controllers.some((c) => c.emergency !== undefined)) return undefined;
  return controllers.flatMap((c) => (c.emergency === undefined || c.emergency === "none" ? [] : [{ instance: c.instance, step: c.emergency, held: held(c.instance) }]));
}
