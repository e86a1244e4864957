import { BATCH_LIMITS, BatchLine } from "../../core/schemas/batch.ts";
import { jsonDepthExceeds, MAX_JSON_DEPTH } from "../../core/schemas/json-limits.ts";
import { ChatCompletionRequest, CompletionRequest } from "../../core/schemas/openai-request.ts";

const BODY_SCHEMAS = { "/v1/chat/completions": ChatCompletionRequest, "/v1/completions": CompletionRequest } as const;

/** A checked input file: its lines, and the endpoint they all call (null when they mix both). */
export type CheckedFile = { ok: true; lines: BatchLine[]; endpoint: BatchLine["url"] | null } | { ok: false; line: number; message: string };

const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });
const UTF8_BYTES = new TextEncoder();

/**
 * Checks a batch input file line by line (1-based line numbers in errors): UTF-8 JSONL, each line
 * a BatchLine whose body the endpoint's own schema accepts and that does not ask to stream, with
 * custom_ids unique in the file, at most BATCH_LIMITS.lines lines of BATCH_LIMITS.lineBytes each,
 * whose bodies nest no deeper than a request's (MAX_JSON_DEPTH). Blank lines are skipped.
 */
export function checkBatchFile(bytes: Uint8Array): CheckedFile {
  let text: string;
  try {
    text = UTF8.decode(bytes);
  } catch {
    return { ok: false, line: 0, message: "the file is not UTF-8 text" };
  }
  const lines: BatchLine[] = [];
  const ids = new Set<string>();
  const endpoints = new Set<BatchLine["url"]>();
  const rows = text.split("\n");
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]!.trim();
    if (row === "") continue;
    const fail = (message: string): CheckedFile => ({ ok: false, line: i + 1, message: `line ${i + 1}: ${message}` });
    if (lines.length === BATCH_LIMITS.lines) return fail(`a batch file holds at most ${BATCH_LIMITS.lines} requests`);
    if (UTF8_BYTES.encode(row).byteLength > BATCH_LIMITS.lineBytes) return fail(`a request line may have at most ${BATCH_LIMITS.lineBytes} bytes`);
    let value: unknown;
    try {
      value = JSON.parse(row);
    } catch {
      return fail("not valid JSON");
    }
    // The line wraps its body in one object: the body may nest as deep as a request's.
    if (jsonDepthExceeds(value, MAX_JSON_DEPTH + 1)) return fail(`the request body nests deeper than ${MAX_JSON_DEPTH} levels`);
    const parsed = BatchLine.safeParse(value);
    if (!parsed.success) return fail(issueText(parsed.error.issues[0]));
    const line = parsed.data;
    const body = BODY_SCHEMAS[line.url].safeParse(line.body);
    if (!body.success) return fail(issueText(body.error.issues[0], "body"));
    if (line.body.stream === true) return fail("'body.stream' must not be true in a batch (answers are written to the output file)");
    if (ids.has(line.custom_id)) return fail(`custom_id "${line.custom_id.slice(0, 64)}" is used by an earlier line; each must be unique`);
    ids.add(line.custom_id);
    endpoints.add(line.url);
    lines.push(line);
  }
  if (lines.length === 0) return { ok: false, line: 0, message: "the file holds no request lines" };
  return { ok: true, lines, endpoint: endpoints.size === 1 ? [...endpoints][0]! : null };
}

function issueText(issue: { path: PropertyKey[]; message: string } | undefined, prefix?: string): string {
  const path = [...(prefix ? [prefix] : []), ...(issue?.path ?? []).map(String)].join(".");
  return `${path ? `'${path}': ` : ""}${issue?.message ?? "invalid"}`;
}
