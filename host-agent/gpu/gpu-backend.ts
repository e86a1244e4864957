import { z } from "zod";

/** The backends `openGpuBackend` can build; "fallback" is NVML with nvidia-smi behind it. */
export const GpuBackendName = z.enum(["nvml", "nvidia-smi", "sim", "fallback"]);
export type GpuBackendName = z.infer<typeof GpuBackendName>;

/** One GPU as a backend enumerates it. `uuid` is absent where the backend cannot tell. */
export const GpuDevice = z.object({
  index: z.number().int().nonnegative(),
  name: z.string(),
  uuid: z.string().optional(),
});
export type GpuDevice = z.infer<typeof GpuDevice>;

/** Clocks a GPU runs at right now, MHz. */
export const GpuClocks = z.object({
  graphicsMhz: z.number().nonnegative(),
  smMhz: z.number().nonnegative(),
  memoryMhz: z.number().nonnegative(),
});
export type GpuClocks = z.infer<typeof GpuClocks>;

/**
 * A MIG GPU-instance profile as `nvidia-smi mig -cgi` takes it: a profile name such as "1g.10gb"
 * or "3g.40gb+me", or its numeric id such as "19".
 */
export const MigProfile = z.string().regex(/^(\d+|\d+g\.\d+gb(\+me)?)$/, "a MIG profile such as 1g.10gb or 19");
export type MigProfile = z.infer<typeof MigProfile>;

/** One MIG device carved from a GPU: its profile and the UUID an engine gets as CUDA_VISIBLE_DEVICES. */
export const MigDevice = z.object({ profile: z.string().min(1), uuid: z.string().min(1) });
export type MigDevice = z.infer<typeof MigDevice>;

/**
 * A GPU's MIG mode: on now (`current`), and after the next GPU reset (`pending`). While MIG mode is
 * on, CUDA sees only the GPU's MIG devices: a GPU that runs whole again needs it off.
 */
export const MigMode = z.object({ current: z.boolean(), pending: z.boolean() });
export type MigMode = z.infer<typeof MigMode>;

/**
 * What the plan applier and telemetry need from a GPU site's driver. Devices are addressed by
 * their NVML index (the order nvidia-smi uses too). Every method may throw a `GpuError`.
 */
export interface GpuBackend {
  readonly name: GpuBackendName;
  /** Connects to the driver; call once before anything else. */
  init(): Promise<void>;
  /** Releases the driver; the backend may be initialised again afterwards. */
  shutdown(): Promise<void>;
  deviceCount(): Promise<number>;
  devices(): Promise<GpuDevice[]>;
  /** Graphics clocks the GPU accepts at its highest memory clock, MHz, highest first. */
  supportedGraphicsClocks(index: number): Promise<number[]>;
  /** Keeps the graphics clock within [minMhz, maxMhz] until reset. */
  lockGraphicsClocks(index: number, minMhz: number, maxMhz: number): Promise<void>;
  /** Returns the graphics clock to the driver's default behaviour. */
  resetGraphicsClocks(index: number): Promise<void>;
  /** Power the GPU draws now, W. */
  powerUsageW(index: number): Promise<number>;
  /** Energy the GPU has used since some fixed origin, J; never decreases. */
  totalEnergyJ(index: number): Promise<number>;
  /** The power cap the GPU enforces, W. */
  powerLimitW(index: number): Promise<number>;
  setPowerLimitW(index: number, watts: number): Promise<void>;
  /** The power cap the GPU enforces when nobody has set one (its driver default), W. */
  defaultPowerLimitW(index: number): Promise<number>;
  currentClocksMhz(index: number): Promise<GpuClocks>;
  /** Enables MIG mode and creates one GPU instance (with its default compute instance) per profile. */
  createMigInstances(index: number, profiles: readonly MigProfile[]): Promise<void>;
  /** Destroys every compute instance, then every GPU instance, on the GPU. */
  destroyMigInstances(index: number): Promise<void>;
  /** The MIG devices carved from the GPU (none when it is not partitioned). */
  migDevices(index: number): Promise<MigDevice[]>;
  /** The GPU's MIG mode; NOT_SUPPORTED where the GPU has no MIG. */
  migMode(index: number): Promise<MigMode>;
  /**
   * Asks the driver to turn MIG mode off (the GPU must have no MIG instances left). Where the GPU
   * is in use or the platform needs a reset, the change stays pending: read `migMode` after.
   */
  disableMigMode(index: number): Promise<void>;
}

/** Names of the per-call operations of a backend (everything but its lifecycle). */
export type GpuOp = Exclude<keyof GpuBackend, "name" | "init" | "shutdown">;
