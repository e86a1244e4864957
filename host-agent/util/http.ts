import type { IncomingMessage, Server, ServerResponse } from "node:http";

/** A request body over the limit (413), not JSON (400), or one the server cannot hold now (503). */
export class BodyError extends Error {
  constructor(
    readonly status: 400 | 413 | 503,
    message: string,
  ) {
    super(message);
  }
}

/** Reads and JSON-parses a request body of at most `limit` bytes. */
export async function readJsonBody(req: IncomingMessage, limit: number): Promise<unknown> {
  return (await readJsonBodyBytes(req, limit)).value;
}

/**
 * Reads a request body of at most `limit` bytes; `take` (when given) is asked for each chunk's
 * bytes before it is kept and may refuse by throwing a BodyError.
 */
export async function readBodyBytes(req: IncomingMessage, limit: number, take?: (bytes: number) => void): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new BodyError(413, `the request body is larger than ${limit} bytes`);
    take?.(chunk.length);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** Reads a JSON request body of at most `limit` bytes: its bytes as sent, and its value. */
export async function readJsonBodyBytes(req: IncomingMessage, limit: number): Promise<{ bytes: Buffer; value: unknown }> {
  const bytes = await readBodyBytes(req, limit);
  try {
    return { bytes, value: JSON.parse(bytes.toString("utf8")) };
  } catch {
    throw new BodyError(400, "the request body is not valid JSON");
  }
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(body));
}

/** An OpenAI-style error body `{ error: { message, type, param, code } }`, with `headers` (e.g. Allow, Retry-After). */
export function sendOpenAiError(res: ServerResponse, status: number, message: string, code: string | null = null, param: string | null = null, headers: Record<string, string> = {}): void {
  const type = status === 401 ? "authentication_error" : status === 403 ? "permission_error" : status === 429 ? "rate_limit_error" : status >= 500 ? "server_error" : "invalid_request_error";
  sendJson(res, status, { error: { message, type, param, code } }, headers);
}

/** Starts `server` on host:port (0 = any free port) and returns its base URL. */
export function listen(server: Server, host: string, port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      const address = server.address();
      const bound = typeof address === "object" && address ? address.port : port;
      resolve(`http://${host.includes(":") ? `[${host}]` : host}:${bound}`);
    });
  });
}

/**
 * Stops accepting connections and ends the idle ones; connections still busy after `graceMs` are
 * cut. Resolves when the server has closed.
 */
export function closeServer(server: Server, graceMs = 1000): Promise<void> {
  return new Promise((resolve) => {
    const cut = setTimeout(() => server.closeAllConnections(), graceMs);
    server.close(() => {
      clearTimeout(cut);
      resolve();
    });
    server.closeIdleConnections();
  });
}

/** A header's first value, trimmed; undefined when absent or blank. */
export function header(value: string | string[] | undefined): string | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  return v === undefined || v.trim() === "" ? undefined : v.trim();
}
