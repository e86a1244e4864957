/** The OpenAI error body: `{ error: { message, type, param, code } }`, with the matching HTTP status. */
export function openAiError(status: number, message: string, opts: { type?: string; param?: string | null; code?: string | null } = {}): Response {
  const type = opts.type ?? (status === 401 ? "authentication_error" : status === 429 ? "rate_limit_error" : status >= 500 ? "server_error" : "invalid_request_error");
  return Response.json({ error: { message, type, param: opts.param ?? null, code: opts.code ?? null } }, { status });
}
