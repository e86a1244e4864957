import { z } from "zod";
import { MigProfile } from "./gpu-backend.ts";
import { GpuError, type GpuErrorSite } from "./gpu-error.ts";

const ClockMhz = z.number().int().positive();
const ClockRange = z.object({ minMhz: ClockMhz, maxMhz: ClockMhz }).refine((r) => r.minMhz <= r.maxMhz, "minMhz must not exceed maxMhz");
const PowerW = z.number().positive().finite();
const MigProfiles = z.array(MigProfile).min(1, "at least one profile");

function parse<T>(site: GpuErrorSite, schema: z.ZodType<T>, value: unknown): T {
  const result = schema.safeParse(value);
  if (!result.success) throw new GpuError("INVALID_ARGUMENT", site, z.prettifyError(result.error).replaceAll("\n", "; "));
  return result.data;
}

/** Throws NOT_FOUND unless `index` names one of `count` devices. */
export function checkIndex(site: GpuErrorSite & { device: number }, count: number): void {
  if (!Number.isInteger(site.device) || site.device < 0 || site.device >= count) {
    throw new GpuError("NOT_FOUND", site, `no GPU with index ${site.device} (${count} found)`);
  }
}

/** Validates a clock range: positive integers, min <= max. */
export function checkClockRange(site: GpuErrorSite, minMhz: number, maxMhz: number): void {
  parse(site, ClockRange, { minMhz, maxMhz });
}

/** Validates a power limit in watts. */
export function checkPowerW(site: GpuErrorSite, watts: number): void {
  parse(site, PowerW, watts);
}

/** Validates a non-empty list of MIG profiles. */
export function checkMigProfiles(site: GpuErrorSite, profiles: readonly string[]): void {
  parse(site, MigProfiles, profiles);
}
