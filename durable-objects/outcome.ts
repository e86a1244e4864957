import type { z } from "zod";

/**
 * What a Durable Object RPC method returns instead of throwing: a rejected RPC surfaces as an
 * unhandled rejection in the Workers Vitest pool (workers-sdk #7707), and the Worker needs the
 * status anyway. `param` is the dotted path of the offending field.
 */
export type Outcome<T> = { ok: true; value: T } | { ok: false; status: 400 | 404 | 409; message: string; param?: string };

export function success<T>(value: T): Outcome<T> {
  return { ok: true, value };
}

export function failure(status: 400 | 404 | 409, message: string, param?: string): Outcome<never> {
  return param === undefined ? { ok: false, status, message } : { ok: false, status, message, param };
}

/** A 400 for a zod error: the first issue's message and path, plus a count of the rest. */
export function invalid(what: string, error: z.ZodError): Outcome<never> {
  const first = error.issues[0];
  const param = first?.path.map(String).join(".");
  const more = error.issues.length > 1 ? ` (and ${error.issues.length - 1} more)` : "";
  return failure(400, `invalid ${what}: ${first?.message ?? "bad input"}${param ? ` at ${param}` : ""}${more}`, param || undefined);
}
