import { existsSync, readFileSync, rmSync } from "node:fs";
import { z } from "zod";
import type { GpuBackend, GpuDevice } from "../gpu/index.ts";
import { writeFileAtomic } from "../util/atomic-file.ts";

/** One GPU's settings from before the agent first changed anything on it. */
const SavedGpu = z.object({
  index: z.number().int().nonnegative(),
  name: z.string(),
  uuid: z.string().optional(),
  /** The power limit the GPU enforced then, W; null where the backend could not read it. */
  powerLimitW: z.number().positive().nullable(),
  /** The driver's default power limit, W; null where the backend could not read it. */
  defaultPowerLimitW: z.number().positive().nullable(),
});
type SavedGpu = z.infer<typeof SavedGpu>;

const GpuDefaultsFile = z.object({ savedAtMs: z.number(), gpus: z.array(SavedGpu) });

/**
 * The GPUs' settings from before the agent's first change, kept in a file in the state dir for as
 * long as the agent's changes may be in force: written (atomically) at start before anything is
 * changed, removed at a clean stop once every GPU is back. Finding the file at start therefore means
 * an earlier run did not stop cleanly (a crash, SIGKILL, power loss) and may have left power limits
 * lowered and clocks locked: those GPUs are put back from the file, and the file's values, not the
 * GPUs' present (possibly lowered) ones, stay the values to go back to.
 *
 * Clocks: drivers offer no way to read a clock lock back, and the agent changes no other clock
 * setting, so a GPU's clocks go back by resetting its locked graphics clocks (driver default).
 *
 * @example
 * const defaults = await GpuDefaults.restoreOrRecord(gpus, "/var/lib/greenference-agent/gpu-defaults.json", log);
 * // ... the agent runs, the power ladder lowers limits ...
 * await defaults.release(); // limits and clocks back, file removed
 */
export class GpuDefaults {
  private constructor(
    private readonly gpus: GpuBackend,
    private readonly path: string,
    readonly saved: readonly SavedGpu[],
    private readonly log: (message: string) => void,
  ) {}

  static async restoreOrRecord(gpus: GpuBackend, path: string, log: (message: string) => void): Promise<GpuDefaults> {
    const devices = await gpus.devices();
    const earlier = readSaved(path, log);
    const saved: SavedGpu[] = [];
    for (const device of devices) {
      const found = earlier?.find((g) => sameGpu(g, device));
      if (found) saved.push(found);
      else saved.push(await record(gpus, device, earlier !== null, log));
    }
    if (earlier) log(`found ${path}: an earlier run did not stop cleanly; putting every GPU back to the settings saved there`);
    if (!earlier || saved.some((g) => !earlier.includes(g))) writeFileAtomic(path, JSON.stringify({ savedAtMs: Date.now(), gpus: saved }));
    const defaults = new GpuDefaults(gpus, path, saved, log);
    for (const failure of await defaults.restore()) log(`start-up: ${failure}`);
    return defaults;
  }

  /** Puts every GPU's power limit back and resets its clocks; returns what failed. */
  async restore(): Promise<string[]> {
    const failures: string[] = [];
    for (const g of this.saved) {
      const target = g.powerLimitW ?? g.defaultPowerLimitW;
      try {
        if (target !== null && Math.abs((await this.gpus.powerLimitW(g.index)) - target) >= 0.5) {
          await this.gpus.setPowerLimitW(g.index, target);
          this.log(`GPU ${g.index}: power limit back to ${target} W`);
        }
      } catch (error) {
        failures.push(`restore GPU ${g.index}'s power limit to ${target} W: ${(error as Error).message}`);
      }
      try {
        await this.gpus.resetGraphicsClocks(g.index);
      } catch (error) {
        failures.push(`reset GPU ${g.index} clocks: ${(error as Error).message}`);
      }
    }
    return failures;
  }

  /** At a clean stop: restores every GPU and, if all went back, removes the file. */
  async release(): Promise<void> {
    const failures = await this.restore();
    for (const failure of failures) this.log(`shutdown: ${failure}`);
    if (failures.length === 0) rmSync(this.path, { force: true });
    else this.log(`kept ${this.path}: the next start puts the GPUs back from it`);
  }
}

/** A saved GPU is this device when index and UUID (or, without UUIDs, name) agree. */
function sameGpu(g: SavedGpu, d: GpuDevice): boolean {
  return g.index === d.index && (g.uuid !== undefined && d.uuid !== undefined ? g.uuid === d.uuid : g.name === d.name);
}

function readSaved(path: string, log: (message: string) => void): SavedGpu[] | null {
  if (!existsSync(path)) return null;
  try {
    return GpuDefaultsFile.parse(JSON.parse(readFileSync(path, "utf8"))).gpus;
  } catch (error) {
    log(`cannot read ${path} (${(error as Error).message}); each GPU goes back to its driver's default power limit`);
    return [];
  }
}

/**
 * Reads a GPU's settings now, as the ones to go back to. Where an earlier run may have changed them
 * (its file was there but did not list this GPU, or could not be read), the driver's default power
 * limit is taken instead of the present one.
 */
async function record(gpus: GpuBackend, device: GpuDevice, earlierRun: boolean, log: (message: string) => void): Promise<SavedGpu> {
  const read = (f: () => Promise<number>) => f().catch(() => null);
  const defaultPowerLimitW = await read(() => gpus.defaultPowerLimitW(device.index));
  const present = await read(() => gpus.powerLimitW(device.index));
  const powerLimitW = earlierRun && defaultPowerLimitW !== null ? defaultPowerLimitW : present;
  if (!earlierRun && present !== null && defaultPowerLimitW !== null && present < defaultPowerLimitW) {
    log(`GPU ${device.index}'s power limit is ${present} W, below its default ${defaultPowerLimitW} W; the agent keeps ${present} W as the limit to go back to`);
  }
  return { index: device.index, name: device.name, ...(device.uuid ? { uuid: device.uuid } : {}), powerLimitW, defaultPowerLimitW };
}
