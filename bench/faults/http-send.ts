import { request } from "node:http";
import type { Socket } from "node:net";
import type { Send } from "./run-cases.ts";
import { DEV_PROXY_RESTART } from "./traffic.ts";

/** Sockets given a listener for errors that come after their request ended (keep-alive reuses them). */
const guarded = new WeakSet<Socket>();

/**
 * Sends one request with node:http and reads the answer even when the server answered before
 * the body was written and closed the connection (the edge's 413 on an oversized body does;
 * fetch then reports only the write's ECONNRESET). No answer at all is an error, as with fetch.
 */
export function httpSend(baseUrl: string): Send {
  return (r) =>
    new Promise<Response>((resolve, reject) => {
      const url = new URL(r.path, baseUrl);
      const body = r.body === undefined ? undefined : Buffer.from(r.body);
      const req = request(url, { method: r.method, headers: { ...r.headers, ...(body ? { "content-length": String(body.length) } : {}) } }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve(new Response(res.statusCode === 204 || res.statusCode === 304 ? null : Buffer.concat(chunks), { status: res.statusCode ?? 0, headers: Object.entries(res.headers).flatMap(([k, v]) => (v === undefined ? [] : Array.isArray(v) ? v.map((x): [string, string] => [k, x]) : [[k, v] as [string, string]])) })));
        res.on("error", reject);
      });
      // A write cut by an early answer is not a failure: wait for the answer (or the socket's close).
      req.on("error", (e) => setTimeout(() => reject(e), 200));
      // The write's error can come after the answer ended and the socket left the request: not a crash.
      req.on("socket", (socket) => {
        if (guarded.has(socket)) return;
        guarded.add(socket);
        socket.on("error", () => {});
      });
      req.end(body);
    });
}

/**
 * `send`, sending again once what wrangler dev's proxy answered with DEV_PROXY_RESTART (its
 * connection to the Worker broke before the Worker's answer came; see traffic.ts); `retries`
 * counts those.
 */
export function retryingDevProxy(send: Send, retries: { count: number }): Send {
  return async (r) => {
    const first = await send(r);
    if (first.status !== 503 || !(await first.clone().text()).startsWith(DEV_PROXY_RESTART)) return first;
    retries.count++;
    return send(r);
  };
}
