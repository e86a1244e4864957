/** What happened to one request the load generator sent through the edge. */
export interface RequestOutcome {
  startedMs: number;
  stream: boolean;
  status: number;
  /** True for a 2xx answer whose body (or stream, to `[DONE]`) arrived whole. */
  ok: boolean;
  site: string | null;
  classId: string | null;
  /** Attempts the edge made (x-greenference-attempts), 1 when it did not say. */
  attempts: number;
  firstByteMs: number | null;
  totalMs: number;
  completionTokens: number | null;
  receipt: { energyJ: number; gco2e: number } | null;
  /** The error's message for a non-2xx answer or a broken stream/connection. */
  error: string | null;
}

/** The error of a stream that ended without `[DONE]` and without an error event: cut, not told why. */
export const STREAM_CUT = "the stream ended without data: [DONE]";

/** No answer at all, or a failure that does not say why (a stream cut mid-way says why and is counted apart). */
export function isLost(r: RequestOutcome): boolean {
  return !r.ok && (r.status === 0 || (r.status >= 400 && !r.error));
}

/**
 * Reads one response to the end: JSON or SSE, the receipt from `usage.greenference`, and whether
 * the stream finished with `data: [DONE]`.
 */
export async function readOutcome(response: Response, startedMs: number, stream: boolean, now: () => number): Promise<RequestOutcome> {
  const firstByteMs = now() - startedMs;
  const head = {
    startedMs,
    stream,
    status: response.status,
    site: response.headers.get("x-greenference-site"),
    classId: response.headers.get("x-greenference-class"),
    attempts: Number(response.headers.get("x-greenference-attempts") ?? 1),
    firstByteMs,
  };
  let text: string;
  try {
    text = await response.text();
  } catch (e) {
    return { ...head, ok: false, totalMs: now() - startedMs, completionTokens: null, receipt: null, error: `the body broke off: ${e instanceof Error ? e.message : String(e)}` };
  }
  const totalMs = now() - startedMs;
  if (!response.ok) {
    let message = text.slice(0, 300);
    try {
      message = (JSON.parse(text) as { error?: { message?: string } }).error?.message ?? message;
    } catch {
      // not JSON: keep the text
    }
    return { ...head, ok: false, totalMs, completionTokens: null, receipt: null, error: message };
  }
  let usage: { completion_tokens?: number; greenference?: { energy_j: number; gco2e: number } } | undefined;
  let complete = true;
  let streamError: string | null = null;
  if (stream) {
    const events = text.split("\n").filter((l) => l.startsWith("data: ")).map((l) => l.slice(6));
    complete = events.at(-1) === "[DONE]";
    for (const e of events) {
      if (e === "[DONE]") continue;
      const chunk = JSON.parse(e) as { usage?: typeof usage; error?: { message?: string } };
      if (chunk.usage) usage = chunk.usage;
      if (chunk.error) streamError = chunk.error.message ?? "an error event without a message";
    }
  } else {
    usage = (JSON.parse(text) as { usage?: typeof usage }).usage;
  }
  const g = usage?.greenference;
  return {
    ...head,
    ok: complete,
    totalMs,
    completionTokens: usage?.completion_tokens ?? null,
    receipt: g ? { energyJ: g.energy_j, gco2e: g.gco2e } : null,
    error: complete ? null : streamError === null ? STREAM_CUT : `the stream ended with an error event: ${streamError}`,
  };
}
