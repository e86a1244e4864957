import { signSiteHop } from "../../host-agent/gateway/ingress-auth.ts";
import type { FuzzRequest } from "./fuzz-requests.ts";
import type { Send } from "./run-cases.ts";

/**
 * Sends a fuzzed request to a site's ingress over HTTP, signed with the site's ingress secret as
 * the edge signs (so it gets past the signature check and reaches the gateway's parsing and
 * scheduling) when `signed` says so. The answer's head is enough: callers cancel the body.
 */
export function gatewaySender(ingressUrl: string, secret: string, signed: (r: FuzzRequest) => boolean): Send {
  return (r) => {
    const body = r.body === undefined ? undefined : typeof r.body === "string" ? Buffer.from(r.body) : Buffer.from(r.body);
    const headers = signed(r) ? { ...r.headers, ...signSiteHop(secret, r.method, new URL(r.path, ingressUrl).pathname, r.headers, body ?? "") } : r.headers;
    return fetch(new URL(r.path, ingressUrl), { method: r.method, headers, ...(body === undefined ? {} : { body }) });
  };
}

/** Sends a fuzzed request to an agent's local API over HTTP. */
export function plainSender(baseUrl: string): Send {
  return (r) => fetch(new URL(r.path, baseUrl), { method: r.method, headers: r.headers, ...(r.body === undefined ? {} : { body: r.body }) });
}

/** Whether to sign a fuzzed gateway request: three in four are, decided by the request itself (replayable). */
export const mostlySigned = (r: FuzzRequest): boolean => (r.path.length + JSON.stringify(r.headers).length) % 4 !== 0;
