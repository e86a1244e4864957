import type { MigSlice } from "../../src/core/schemas/mig.ts";
import { GpuError, type GpuBackend, type MigDevice } from "../gpu/index.ts";

/** The MIG devices a GPU has now; none where the backend has no MIG (a whole GPU). */
export async function migDevicesOf(gpus: GpuBackend, index: number): Promise<MigDevice[]> {
  try {
    return await gpus.migDevices(index);
  } catch (error) {
    if (error instanceof GpuError && error.code === "NOT_SUPPORTED") return [];
    throw error;
  }
}

/** Whether a GPU's devices are the slices wanted (as a multiset: the driver lists them in its own order). */
export function sameLayout(devices: readonly MigDevice[], wanted: readonly MigSlice[]): boolean {
  const key = (xs: readonly string[]) => [...xs].sort().join(",");
  return key(devices.map((d) => d.profile)) === key(wanted);
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

/** Carves a GPU into `wanted` (none: whole again): every instance destroyed, then the wanted ones created. */
export async function reshape(gpus: GpuBackend, index: number, wanted: readonly MigSlice[]): Promise<void> {
  await gpus.destroyMigInstances(index).catch((error: unknown) => {
    if (!(error instanceof GpuError && error.code === "NOT_SUPPORTED" && wanted.length === 0)) throw error;
  });
  if (wanted.length > 0) await gpus.createMigInstances(index, wanted);
}
