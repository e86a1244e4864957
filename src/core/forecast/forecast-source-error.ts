import type { z } from "zod";

/** Why a provider gave no usable forecast: it answered an error, took too long, could not be reached, or sent an unexpected shape. */
export type ForecastFailure = "http" | "timeout" | "network" | "schema" | "config";

/**
 * A provider's forecast could not be used. The refresh catches it and falls back to persistence
 * with `message` as the fallback reason, so the message names the provider and the failure.
 *
 * @example
 * throw new ForecastSourceError("electricitymaps", "http", "HTTP 500 from /v3/carbon-intensity/forecast");
 */
export class ForecastSourceError extends Error {
  override name = "ForecastSourceError";

  constructor(
    readonly source: string,
    readonly failure: ForecastFailure,
    detail: string,
  ) {
    super(`${source}: ${failure} failure: ${detail}`);
  }
}

/** A schema mismatch as a ForecastSourceError naming the first bad field. */
export function schemaError(source: string, error: z.ZodError): ForecastSourceError {
  const first = error.issues[0];
  const path = first?.path.map(String).join(".") ?? "";
  return new ForecastSourceError(source, "schema", `${first?.message ?? "unexpected response"}${path ? ` at ${path}` : ""}`);
}

/** Parses `json` with `schema`, throwing a schema ForecastSourceError on mismatch. */
export function parseResponse<S extends z.ZodType>(source: string, schema: S, json: unknown): z.output<S> {
  const parsed = schema.safeParse(json);
  if (!parsed.success) throw schemaError(source, parsed.error);
  return parsed.data;
}
