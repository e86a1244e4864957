import type { BatchLine } from "../core/schemas/batch.ts";
import { hex } from "./stored-files.ts";

/** One line of a batch's output or error file as OpenAI writes it: the line's answer (status and body) or its error. */
export function batchOutputLine(line: BatchLine, status: number, body: unknown, error: { code: string; message: string } | null, requestId: string): string {
  return JSON.stringify({ id: `batch_req_${hex(12)}`, custom_id: line.custom_id, response: { status_code: status, request_id: requestId, body }, error });
}

/** The error-file line of a line that never got an answer (too many failed attempts, the batch expired, its key was revoked). */
export function unansweredLine(line: BatchLine, code: string, message: string): string {
  return JSON.stringify({ id: `batch_req_${hex(12)}`, custom_id: line.custom_id, response: null, error: { code, message } });
}
