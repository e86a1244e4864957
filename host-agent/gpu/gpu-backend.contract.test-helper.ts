import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { GpuBackend } from "./gpu-backend.ts";
import { GpuError } from "./gpu-error.ts";

/** Awaits a promise that must reject with a GpuError, and returns the error. */
export async function gpuError(promise: Promise<unknown>): Promise<GpuError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(GpuError);
  return error as GpuError;
}

/**
 * What every GpuBackend must do, whatever drives it. `open` returns a fresh, not yet initialised
 * backend over a driver (real or fake) whose GPU 0 accepts locks and power limits.
 */
export function describeGpuBackendContract(label: string, open: () => GpuBackend | Promise<GpuBackend>): void {
  describe(`GpuBackend contract: ${label}`, () => {
    let gpu: GpuBackend;
    beforeEach(async () => {
      gpu = await open();
      await gpu.init();
    });
    afterEach(async () => {
      await gpu.shutdown();
    });

    it("enumerates devices by index", async () => {
      const count = await gpu.deviceCount();
      expect(count).toBeGreaterThan(0);
      const devices = await gpu.devices();
      expect(devices.map((d) => d.index)).toEqual([...Array(count).keys()]);
      for (const d of devices) expect(d.name).not.toBe("");
    });

    it("lists supported graphics clocks as distinct integers, highest first", async () => {
      const clocks = await gpu.supportedGraphicsClocks(0);
      expect(clocks.length).toBeGreaterThan(1);
      expect(clocks).toEqual([...new Set(clocks)].sort((a, b) => b - a));
      for (const mhz of clocks) expect(Number.isInteger(mhz)).toBe(true);
    });

    it("locks the graphics clock at or below the lock and resets it", async () => {
      const clocks = await gpu.supportedGraphicsClocks(0);
      const middle = clocks[Math.floor(clocks.length / 2)] as number;
      await gpu.lockGraphicsClocks(0, middle, middle);
      expect((await gpu.currentClocksMhz(0)).graphicsMhz).toBeLessThanOrEqual(middle);
      await gpu.resetGraphicsClocks(0);
      const after = await gpu.currentClocksMhz(0);
      expect(after.memoryMhz).toBeGreaterThan(0);
    });

    it("reads power and an energy counter that never decreases", async () => {
      expect(await gpu.powerUsageW(0)).toBeGreaterThan(0);
      const first = await gpu.totalEnergyJ(0);
      const second = await gpu.totalEnergyJ(0);
      expect(first).toBeGreaterThanOrEqual(0);
      expect(second).toBeGreaterThanOrEqual(first);
    });

    it("sets and reads back the power limit; the default limit stays what it was", async () => {
      const limit = await gpu.powerLimitW(0);
      const defaultLimit = await gpu.defaultPowerLimitW(0);
      expect(defaultLimit).toBeGreaterThan(0);
      const lower = Math.round(limit * 0.75);
      await gpu.setPowerLimitW(0, lower);
      expect(await gpu.powerLimitW(0)).toBeCloseTo(lower, 6);
      expect(await gpu.defaultPowerLimitW(0)).toBe(defaultLimit);
    });

    it("refuses a device that does not exist, and a clock range upside down", async () => {
      const count = await gpu.deviceCount();
      const missing = await gpuError(gpu.powerUsageW(count));
      expect(missing.code).toBe("NOT_FOUND");
      expect(missing.message).toContain(`gpu ${count}`);
      expect((await gpuError(gpu.lockGraphicsClocks(0, 1200, 900))).code).toBe("INVALID_ARGUMENT");
    });

    it("refuses calls after shutdown", async () => {
      await gpu.shutdown();
      expect((await gpuError(gpu.powerUsageW(0))).code).toBe("UNINITIALIZED");
      await gpu.init();
    });
  });
}
