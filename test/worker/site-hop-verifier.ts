import { isFreshSiteHop, parseSiteHopHead, siteHopCanonical } from "../../src/core/schemas/site-hop.ts";
import { sha256Hex } from "../../src/edge/secrets.ts";
import { hmacSha256Hex } from "../../src/worker/site-signer.ts";

/**
 * A site's check of the edge's signature, in workerd (the real one is node's, in
 * host-agent/gateway/ingress-auth.ts): null when one of the signatures verifies under one of
 * `secrets` and the time is fresh, else why not.
 */
export async function verifySiteHop(secrets: readonly string[], method: string, path: string, headers: Headers, body: string, nowMs = Date.now()): Promise<string | null> {
  const parsed = parseSiteHopHead((name) => headers.get(name) ?? undefined);
  if (!parsed.ok) return parsed.message;
  if (!isFreshSiteHop(parsed.head.timestampMs, nowMs)) return "stale";
  const canonical = siteHopCanonical({ method, path, timestampMs: parsed.head.timestampMs, nonce: parsed.head.nonce, bodySha256Hex: await sha256Hex(body), header: (h) => headers.get(h) ?? undefined });
  for (const secret of secrets) {
    const expected = await hmacSha256Hex(secret, canonical);
    if (parsed.head.signatures.includes(expected)) return null;
  }
  return "no signature verifies";
}
