/**
 * A 500 for an error nothing handled, logged in full (`wrangler tail`). A client is answered in
 * OpenAI's words, since the error's message may name internals (a storage limit, a stack
 * overflow); an authenticated operator or agent (`explain`) is told what failed.
 */
export function internalError(error: unknown, o: { explain?: boolean } = {}): Response {
  console.error("unhandled error", error);
  const why = o.explain ? `: ${(error instanceof Error ? error.message : String(error)).slice(0, 500)}` : ". Quote its x-request-id if you report it";
  return openAiError(500, `The server had an error while processing your request${why}.`, { code: "internal_error" });
}

/** The OpenAI error body: `{ error: { message, type, param, code } }`, with the matching HTTP status. */
export function openAiError(status: number, message: string, opts: { type?: string; param?: string | null; code?: string | null } = {}): Response {
  const type = opts.type ?? (status === 401 ? "authentication_error" : status === 429 ? "rate_limit_error" : status >= 500 ? "server_error" : "invalid_request_error");
  return Response.json({ error: { message, type, param: opts.param ?? null, code: opts.code ?? null } }, { status });
}
