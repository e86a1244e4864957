import type { z } from "zod";
import { invalidSummary } from "../src/core/schemas/issue-param.ts";

/**
 * What a Durable Object RPC method returns instead of throwing: a rejected RPC surfaces as an
 * unhandled rejection in the Workers Vitest pool (workers-sdk #7707), and the Worker needs the
 * status anyway. `param` is the path of the offending field (`paramText`: `sites[0].gpus`); `code` the OpenAI error code
 * when the status's default (see `outcomeError`) says too little.
 */
export type Outcome<T> = { ok: true; value: T } | { ok: false; status: 400 | 404 | 409 | 422; message: string; param?: string; code?: string };

export function success<T>(value: T): Outcome<T> {
  return { ok: true, value };
}

export function failure(status: 400 | 404 | 409 | 422, message: string, param?: string, code?: string): Outcome<never> {
  return { ok: false, status, message, ...(param === undefined ? {} : { param }), ...(code === undefined ? {} : { code }) };
}

/** A 400 for a zod error: its one-line summary (invalidSummary), its field the param (an unknown key first). */
export function invalid(what: string, error: z.ZodError): Outcome<never> {
  const { message, param } = invalidSummary(what, error);
  return failure(400, message, param ?? undefined);
}
