import type { GpuType } from "../../src/core/schemas/ids.ts";
import type { GpuHealth, InstanceState } from "../../src/core/schemas/telemetry.ts";
import type { Engine, EngineLoad } from "../engines/engine.ts";
import type { TrackedGpuBackend } from "../gpu-state/tracked-gpu-backend.ts";
import type { RequestLog, ServedSummary } from "./request-log.ts";

/** One GPU's readings; zeros and "failed" health where the driver would not answer. */
export interface GpuReading {
  index: number;
  type: GpuType;
  powerW: number;
  energyJ: number;
  smClockMhz: number;
  lockedClockMhz: number | null;
  health: GpuHealth;
  error?: string;
}

/** One planned instance over its replicas: queues summed, KV use averaged, what it served. */
export interface InstanceReading {
  id: string;
  state: InstanceState;
  /** Starting, and served meanwhile on the engines it replaces (`handoverReplicas`), whose queues it reports. */
  covered: boolean;
  replicas: number;
  /** Replicas that run but do not answer their health checks (their queues are not read). */
  unresponsive: number;
  /** Replicas read whose queue is unknown: their metrics could not be read past the engine's hold of its last reading (`Engine.load`); left out of the sums. */
  unread: number;
  /** Requests waiting in its engines' queues. */
  waiting: number;
  /** Requests for it that the site gateway holds in its own queue (replicas full, or the emergency ladder keeping the queue there). */
  held: number;
  running: number;
  kvUse: number;
  served: ServedSummary;
}

/** Reads power, energy and clocks of every GPU, all GPUs at once. */
export async function readGpus(gpus: TrackedGpuBackend, types: readonly GpuType[]): Promise<GpuReading[]> {
  return Promise.all(
    types.map(async (type, index) => {
      try {
        const [powerW, energyJ, clocks] = await Promise.all([gpus.powerUsageW(index), gpus.totalEnergyJ(index), gpus.currentClocksMhz(index)]);
        return { index, type, powerW, energyJ, smClockMhz: clocks.smMhz, lockedClockMhz: gpus.lockOf(index)?.maxMhz ?? null, health: "ok" as const };
      } catch (error) {
        return { index, type, powerW: 0, energyJ: 0, smClockMhz: 0, lockedClockMhz: gpus.lockOf(index)?.maxMhz ?? null, health: "failed" as const, error: (error as Error).message };
      }
    }),
  );
}

/**
 * Reads every instance: queue and KV use from its replicas' metrics (a replica whose reading is
 * unknown is left out and counted as `unread`, not as empty; one that does not answer its health
 * checks is not read, and is counted as `unresponsive`), or for a starting one that `handover`
 * covers, from the engines standing in for it; the requests the site gateway holds for it
 * (`held`); served load and latencies from the request log over (sinceMs, nowMs].
 */
export async function readInstances(states: ReadonlyMap<string, InstanceState>, engines: Iterable<Engine>, log: RequestLog, sinceMs: number, nowMs: number, o: { handover?: (id: string) => readonly Engine[]; held?: (id: string) => number } = {}): Promise<InstanceReading[]> {
  const byId = new Map<string, Engine[]>();
  for (const e of engines) byId.set(e.launch.instanceId, [...(byId.get(e.launch.instanceId) ?? []), e]);
  return Promise.all(
    [...states].map(async ([id, state]) => {
      const replicas = byId.get(id) ?? [];
      const standIns = state === "starting" ? (o.handover?.(id) ?? []) : [];
      const measured = standIns.length > 0 ? standIns : replicas.filter((e) => (e.state === "ready" || e.state === "draining") && !e.unresponsive);
      const read = await Promise.all(measured.map((e) => e.load().catch(() => undefined)));
      const loads = read.filter((l) => l !== undefined);
      const sum = (f: (l: EngineLoad) => number) => loads.reduce((s, l) => s + f(l), 0);
      return {
        id,
        state,
        covered: standIns.length > 0,
        replicas: replicas.length,
        unresponsive: replicas.filter((e) => e.unresponsive).length,
        unread: read.length - loads.length,
        waiting: sum((l) => l.waiting),
        held: o.held?.(id) ?? 0,
        running: sum((l) => l.running),
        kvUse: loads.length === 0 ? 0 : sum((l) => l.kvUse) / loads.length,
        served: log.summary(id, sinceMs, nowMs),
      };
    }),
  );
}
