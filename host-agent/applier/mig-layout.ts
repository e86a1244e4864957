import type { MigSlice } from "../../src/core/schemas/mig.ts";
import { GpuError, type GpuBackend, type MigDevice, type MigMode } from "../gpu/index.ts";

/** The MIG devices a GPU has now; none where the backend has no MIG (a whole GPU). */
export async function migDevicesOf(gpus: GpuBackend, index: number): Promise<MigDevice[]> {
  try {
    return await gpus.migDevices(index);
  } catch (error) {
    if (error instanceof GpuError && error.code === "NOT_SUPPORTED") return [];
    throw error;
  }
}

/** A GPU's MIG mode; off where the backend has no MIG. */
export async function migModeOf(gpus: GpuBackend, index: number): Promise<MigMode> {
  try {
    return await gpus.migMode(index);
  } catch (error) {
    if (error instanceof GpuError && error.code === "NOT_SUPPORTED") return { current: false, pending: false };
    throw error;
  }
}

/** A GPU's MIG layout as the applier compares it with the plan's: its devices, and whether MIG mode is on. */
export interface MigLayout {
  devices: MigDevice[];
  migMode: boolean;
}

/**
 * Whether a GPU's layout is the slices wanted (as a multiset: the driver lists them in its own
 * order); a GPU wanted whole must also be out of MIG mode, or CUDA sees no device on it.
 */
export function sameLayout(layout: MigLayout, wanted: readonly MigSlice[]): boolean {
  const key = (xs: readonly string[]) => [...xs].sort().join(",");
  return key(layout.devices.map((d) => d.profile)) === key(wanted) && (wanted.length > 0 || !layout.migMode);
}

/**
 * The device of slot `slot` in a layout: the k-th device of the slot's profile, where k counts the
 * earlier slots of that profile (slices of one profile are interchangeable).
 *
 * @example
 * deviceForSlot(devices, ["3g.40gb", "3g.40gb"], 1); // the second 3g.40gb device's UUID
 */
export function deviceForSlot(devices: readonly MigDevice[], wanted: readonly MigSlice[], slot: number): string | undefined {
  const profile = wanted[slot];
  const k = wanted.slice(0, slot).filter((p) => p === profile).length;
  return devices.filter((d) => d.profile === profile)[k]?.uuid;
}

/**
 * Carves a GPU into `wanted`: every instance destroyed, then the wanted ones created. With none
 * wanted the GPU runs whole again, so MIG mode is turned off too; where that waits for a GPU reset
 * (the GPU is in use, or the platform resets only with the VM) it throws UNAVAILABLE, and the GPU
 * stays out of the plan until an operator resets it.
 */
export async function reshape(gpus: GpuBackend, index: number, wanted: readonly MigSlice[]): Promise<void> {
  await gpus.destroyMigInstances(index).catch((error: unknown) => {
    if (!(error instanceof GpuError && error.code === "NOT_SUPPORTED" && wanted.length === 0)) throw error;
  });
  if (wanted.length > 0) return gpus.createMigInstances(index, wanted);
  if (!(await migModeOf(gpus, index)).current) return;
  await gpus.disableMigMode(index);
  const mode = await migModeOf(gpus, index);
  if (mode.current) {
    throw new GpuError("UNAVAILABLE", { backend: gpus.name, op: "disableMigMode", device: index }, `MIG mode stays on until the GPU is reset (pending: ${mode.pending ? "on" : "off"}); reset it while idle (nvidia-smi -i ${index} -r)`);
  }
}
