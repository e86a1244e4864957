import type { ServedRecord } from "./fallback-gpu-backend.ts";
import type { GpuBackend, GpuOp } from "./gpu-backend.ts";
import { GpuError } from "./gpu-error.ts";

/**
 * Read only where plans carve MIG slices (Clover): NOT_SUPPORTED there means "no MIG", not a fault.
 * The agent needs every other read on every GPU.
 */
const OPTIONAL: readonly GpuOp[] = ["migMode", "migDevices"];

/** One read: what it gave or the error, and which backend served it (behind NVML, nvidia-smi may). */
export interface GpuRead {
  op: GpuOp;
  ok: boolean;
  value?: unknown;
  error?: string;
  servedBy?: string;
}

export interface GpuCheck {
  backend: string;
  devices: number;
  reads: Array<{ gpu: number; reads: GpuRead[] }>;
  /** Required reads that failed, "gpu N op: error": the agent would not run right on this host. */
  problems: string[];
}

/**
 * A read-only check of a host's GPUs through a backend, before an agent is deployed there: every
 * GPU's supported clocks, power, energy counter (read twice `energyWindowMs` apart: it must not
 * fall), limits, clocks and MIG state. It locks, caps and carves nothing.
 *
 * @example
 * const check = await checkGpus(gpu, { energyWindowMs: 1000, sleep, servedBy });
 * check.problems; // [] on a host the agent can run on
 */
export async function checkGpus(gpu: GpuBackend, o: { energyWindowMs: number; sleep: (ms: number) => Promise<void>; servedBy?: (op: GpuOp) => ServedRecord | undefined }): Promise<GpuCheck> {
  const problems: string[] = [];
  const devices = await gpu.devices();
  const reads: GpuCheck["reads"] = [];
  for (const device of devices) {
    const index = device.index;
    const read = async (op: GpuOp, run: () => Promise<unknown>): Promise<GpuRead> => {
      try {
        const value = await run();
        const served = o.servedBy?.(op);
        return { op, ok: true, value, ...(served ? { servedBy: served.backend } : {}) };
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        const notSupported = error instanceof GpuError && error.code === "NOT_SUPPORTED";
        if (!(OPTIONAL.includes(op) && notSupported)) problems.push(`gpu ${index} ${op}: ${message}`);
        return { op, ok: false, error: message };
      }
    };
    const gpuReads: GpuRead[] = [{ op: "devices", ok: true, value: device }];
    gpuReads.push(await read("supportedGraphicsClocks", async () => {
      const clocks = await gpu.supportedGraphicsClocks(index);
      return { count: clocks.length, highestMhz: clocks[0], lowestMhz: clocks.at(-1) };
    }));
    gpuReads.push(await read("powerUsageW", () => gpu.powerUsageW(index)));
    gpuReads.push(await read("totalEnergyJ", async () => {
      const first = await gpu.totalEnergyJ(index);
      await o.sleep(o.energyWindowMs);
      const second = await gpu.totalEnergyJ(index);
      if (second < first) throw new Error(`the energy counter fell from ${first} J to ${second} J in ${o.energyWindowMs} ms`);
      return { first, second, meanW: (second - first) / (o.energyWindowMs / 1000) };
    }));
    gpuReads.push(await read("powerLimitW", () => gpu.powerLimitW(index)));
    gpuReads.push(await read("defaultPowerLimitW", () => gpu.defaultPowerLimitW(index)));
    gpuReads.push(await read("currentClocksMhz", () => gpu.currentClocksMhz(index)));
    gpuReads.push(await read("migMode", () => gpu.migMode(index)));
    gpuReads.push(await read("migDevices", () => gpu.migDevices(index)));
    reads.push({ gpu: index, reads: gpuReads });
  }
  return { backend: gpu.name, devices: devices.length, reads, problems };
}
