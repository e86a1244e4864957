import { formatSiteHopSignature, SITE_HOP_HEADERS, siteHopCanonical, type SiteSigningKeys } from "../core/schemas/site-hop.ts";
import { randomHex } from "../edge/secrets.ts";

/** The request as it goes to the site: what the signature covers. */
export interface SiteHopRequest {
  method: string;
  /** The request target as sent to the site, query included (the edge's endpoints take none). */
  path: string;
  bodySha256Hex: string;
  /** The headers sent to the site (lower-case names), routing headers included. */
  headers: Readonly<Record<string, string>>;
}

/** HMAC keys by secret; a handful of sites' secrets, so the cap only guards against misuse. */
const hmacKeys = new Map<string, Promise<CryptoKey>>();
const HMAC_KEYS_KEPT = 1024;

function hmacKey(secret: string): Promise<CryptoKey> {
  let key = hmacKeys.get(secret);
  if (!key) {
    if (hmacKeys.size >= HMAC_KEYS_KEPT) hmacKeys.clear();
    key = crypto.subtle.importKey("raw", new TextEncoder().encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    hmacKeys.set(secret, key);
  }
  return key;
}

/** Lower-case hex HMAC-SHA256 of `text` under `secret` (Web Crypto). */
export async function hmacSha256Hex(secret: string, text: string): Promise<string> {
  const mac = await crypto.subtle.sign("HMAC", await hmacKey(secret), new TextEncoder().encode(text));
  return [...new Uint8Array(mac)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * The signing headers of one request to a site: time, a fresh nonce and the HMAC under the site's
 * current ingress secret, plus one under the previous secret while a rotation overlaps (the site
 * accepts a request if either matches a secret it holds).
 *
 * @example
 * const signed = await siteHopHeaders(keys, { method: "POST", path: "/v1/chat/completions", bodySha256Hex, headers }, Date.now());
 * await fetch(url, { method: "POST", headers: { ...headers, ...signed }, body });
 */
export async function siteHopHeaders(keys: SiteSigningKeys, request: SiteHopRequest, nowMs: number, nonce = randomHex(16)): Promise<Record<string, string>> {
  const canonical = siteHopCanonical({ method: request.method, path: request.path, timestampMs: nowMs, nonce, bodySha256Hex: request.bodySha256Hex, header: (name) => request.headers[name] });
  const overlapping = keys.previous !== null && keys.previousUntilMs !== null && nowMs < keys.previousUntilMs;
  const secrets = overlapping ? [keys.current, keys.previous!] : [keys.current];
  const signatures = await Promise.all(secrets.map((s) => hmacSha256Hex(s, canonical)));
  return { [SITE_HOP_HEADERS.timestamp]: String(nowMs), [SITE_HOP_HEADERS.nonce]: nonce, [SITE_HOP_HEADERS.signature]: formatSiteHopSignature(signatures) };
}
