/** Hashing, comparison and generation of the edge's secrets (site tokens, API keys, the admin token). */

/** Lower-case hex SHA-256 of a string's UTF-8 bytes (WebCrypto). */
export async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * Compares two strings in time that does not depend on where they differ. Meant for hex hashes,
 * whose length is public; strings of different lengths are unequal at once.
 */
export function constantTimeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/** `bytes` random bytes as lower-case hex. */
export function randomHex(bytes: number): string {
  return [...crypto.getRandomValues(new Uint8Array(bytes))].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** The token of an `Authorization: Bearer <token>` header, or null. */
export function bearerToken(request: Request): string | null {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.get("authorization") ?? "");
  return match ? match[1]! : null;
}

/**
 * Site tokens name their site so the edge knows whose hash to check: `gfs_<site>_<64 hex>`.
 *
 * @example
 * parseSiteToken(makeSiteToken("wind-nl-1")); // { site: "wind-nl-1", ... }
 */
export function makeSiteToken(site: string): string {
  return `gfs_${site}_${randomHex(32)}`;
}

export function parseSiteToken(token: string): { site: string } | null {
  const match = /^gfs_([a-z0-9][a-z0-9-]{0,62})_[0-9a-f]{64}$/.exec(token);
  return match ? { site: match[1]! } : null;
}

/** API keys carry their id: `gfk_<12 hex id>_<64 hex>`. */
export function makeApiKey(): { id: string; key: string } {
  const id = randomHex(6);
  return { id, key: `gfk_${id}_${randomHex(32)}` };
}

export function parseApiKey(key: string): { id: string } | null {
  const match = /^gfk_([0-9a-f]{12})_[0-9a-f]{64}$/.exec(key);
  return match ? { id: match[1]! } : null;
}

/** A site's ingress secret, the HMAC key of the signed edge-to-site hop: `gfi_<64 hex>`. */
export function makeIngressSecret(): string {
  return `gfi_${randomHex(32)}`;
}
