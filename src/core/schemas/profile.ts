import { z } from "zod";
import { ClassId, GpuType } from "./ids.ts";

/** Latency distribution summary in milliseconds. */
/** Latency of a profile point or a window of requests; `mean` where the source measured it (SLOs on the mean need it). */
export const LatencySummary = z.object({ p50: z.number().nonnegative(), p99: z.number().nonnegative(), mean: z.number().nonnegative().optional() });
export type LatencySummary = z.infer<typeof LatencySummary>;

/**
 * One profiled operating point: an instance of (model, variant, GPU type, TP) locked at `mhz`,
 * serving requests of one class at a steady `loadRps`. Power is of the whole instance (all TP
 * GPUs, without server overhead); energy is per served request.
 */
export const ProfileRow = z.object({
  model: z.string().min(1),
  variant: z.string().min(1).default("base"),
  gpu: GpuType,
  tp: z.number().int().positive(),
  mhz: z.number().positive(),
  classId: ClassId,
  loadRps: z.number().nonnegative(),
  ttftMs: LatencySummary,
  tbtMs: LatencySummary,
  e2eMs: LatencySummary,
  peakPowerW: z.number().nonnegative(),
  avgPowerW: z.number().nonnegative(),
  energyPerRequestJ: z.number().nonnegative(),
  /** False where the instance could not keep up (queue grew over the run); latencies are then lower bounds. */
  stable: z.boolean(),
});
export type ProfileRow = z.infer<typeof ProfileRow>;

/** How a table was made: by the calibrated model (virtual) or on real GPUs by the host agent. */
export const ProfileSource = z.object({
  kind: z.enum(["virtual", "measured"]),
  /** For virtual tables: seed, requests per point, class lengths; for measured: host, driver, engine. */
  details: z.record(z.string(), z.unknown()),
  createdAtMs: z.number().int().nonnegative().optional(),
});

export const ProfileTable = z.object({
  version: z.literal(1),
  source: ProfileSource,
  rows: z.array(ProfileRow).min(1),
});
export type ProfileTable = z.infer<typeof ProfileTable>;
