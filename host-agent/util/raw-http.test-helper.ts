import { connect, type Socket } from "node:net";

/** What came back on a raw connection before it closed: the answer's status, headers and body (status 0 when nothing came). */
export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Milliseconds from the request's start until the connection closed. */
  closedAfterMs: number;
}

/**
 * A request written by hand on one connection, for what fetch cannot send: a body shorter than its
 * Content-Length, one that stops, one whose connection breaks. `headers` go under the request line
 * (after `host`; the connection is kept alive, so it closes only when the server or the test closes
 * it); `send` writes body bytes; `answer` settles when the connection closes, with what the server
 * sent, or after `giveUpMs` (default 5 s), when the test closes it.
 *
 * @example
 * const raw = await rawRequest(url, "POST", "/v1/plan", { "content-length": "1000" });
 * raw.send("0123456789");
 * expect((await raw.answer).status).toBe(408);
 */
export async function rawRequest(url: string, method: string, path: string, headers: Record<string, string>, giveUpMs = 5000): Promise<{ socket: Socket; send(bytes: string): void; answer: Promise<RawAnswer> }> {
  const { hostname, port } = new URL(url);
  const started = Date.now();
  const socket = connect(Number(port), hostname);
  await new Promise<void>((resolve, reject) => socket.once("connect", resolve).once("error", reject));
  let received = "";
  socket.on("data", (d: Buffer) => (received += d.toString("latin1")));
  const giveUp = setTimeout(() => socket.destroy(), giveUpMs);
  const answer = new Promise<RawAnswer>((resolve) => {
    socket.on("error", () => undefined);
    socket.once("close", () => {
      clearTimeout(giveUp);
      resolve({ ...parseAnswer(received), closedAfterMs: Date.now() - started });
    });
  });
  const lines = Object.entries({ host: `${hostname}:${port}`, ...headers }).map(([k, v]) => `${k}: ${v}\r\n`);
  socket.write(`${method} ${path} HTTP/1.1\r\n${lines.join("")}\r\n`);
  return { socket, send: (bytes) => void socket.write(bytes), answer };
}

function parseAnswer(text: string): Omit<RawAnswer, "closedAfterMs"> {
  const split = text.indexOf("\r\n\r\n");
  if (split < 0) return { status: 0, headers: {}, body: "" };
  const [statusLine, ...lines] = text.slice(0, split).split("\r\n");
  const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(":")).toLowerCase(), l.slice(l.indexOf(":") + 1).trim()]));
  const body = text.slice(split + 4);
  return { status: Number(statusLine!.split(" ")[1]), headers, body: headers["transfer-encoding"] === "chunked" ? unchunk(body) : body };
}

/** A chunked body's data (what arrived of it). */
function unchunk(text: string): string {
  let data = "";
  for (let at = 0; at < text.length; ) {
    const lineEnd = text.indexOf("\r\n", at);
    const size = parseInt(text.slice(at, lineEnd), 16);
    if (lineEnd < 0 || !(size > 0)) break;
    data += text.slice(lineEnd + 2, lineEnd + 2 + size);
    at = lineEnd + 2 + size + 2;
  }
  return data;
}
