import { signSiteHop } from "../../host-agent/gateway/ingress-auth.ts";
import type { FuzzRequest } from "./fuzz-requests.ts";
import { httpSend } from "./http-send.ts";
import type { Send } from "./run-cases.ts";

/**
 * Sends a fuzzed request to a site's ingress over HTTP, signed with the site's ingress secret as
 * the edge signs (so it gets past the signature check and reaches the gateway's parsing and
 * scheduling) when `signed` says so. The answer's head is enough: callers cancel the body.
 */
export function gatewaySender(ingressUrl: string, secret: string, signed: (r: FuzzRequest) => boolean): Send {
  const send = httpSend(ingressUrl);
  return (r) => {
    const body = r.body === undefined ? "" : Buffer.from(r.body);
    return send(signed(r) ? { ...r, headers: { ...r.headers, ...signSiteHop(secret, r.method, new URL(r.path, ingressUrl).pathname, r.headers, body) } } : r);
  };
}

/** Whether to sign a fuzzed gateway request: three in four are, decided by the request itself (replayable). */
export const mostlySigned = (r: FuzzRequest): boolean => (r.path.length + JSON.stringify(r.headers).length) % 4 !== 0;
