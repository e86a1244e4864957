import { z } from "zod";

/**
 * Why a GPU call failed. NOT_SUPPORTED and NO_PERMISSION are the ones a caller may route to another
 * backend (see `FallbackGpuBackend`); UNAVAILABLE means the backend itself cannot be used (library
 * or binary missing); BAD_OUTPUT means a tool answered with something we could not parse.
 */
export const GpuErrorCode = z.enum([
  "NOT_SUPPORTED",
  "NO_PERMISSION",
  "NOT_FOUND",
  "UNINITIALIZED",
  "INVALID_ARGUMENT",
  "UNAVAILABLE",
  "BAD_OUTPUT",
  "DRIVER",
]);
export type GpuErrorCode = z.infer<typeof GpuErrorCode>;

/** Where a GPU error happened: the backend, the call and, for per-device calls, the device index. */
export interface GpuErrorSite {
  backend: string;
  op: string;
  device?: number;
}

/**
 * A failed GPU call. The message names the backend, the call and the device.
 *
 * @example
 * new GpuError("NO_PERMISSION", { backend: "nvml", op: "lockGraphicsClocks", device: 0 }, "Insufficient Permissions").message
 * // "nvml lockGraphicsClocks(gpu 0): Insufficient Permissions [NO_PERMISSION]"
 */
export class GpuError extends Error {
  override readonly name = "GpuError";
  readonly backend: string;
  readonly op: string;
  readonly device: number | undefined;

  constructor(
    readonly code: GpuErrorCode,
    site: GpuErrorSite,
    readonly detail: string,
    options?: { cause?: unknown },
  ) {
    const where = site.device === undefined ? "" : `gpu ${site.device}`;
    super(`${site.backend} ${site.op}(${where}): ${detail} [${code}]`, options);
    this.backend = site.backend;
    this.op = site.op;
    this.device = site.device;
  }
}

/** True for errors that another backend may be able to serve (the driver refused, not the device). */
export function isFallbackWorthy(error: unknown): error is GpuError {
  return error instanceof GpuError && (error.code === "NOT_SUPPORTED" || error.code === "NO_PERMISSION");
}
