import { z } from "zod";
import { MAX_CLOCK_SKEW_MS } from "./clock-skew.ts";

/**
 * The signed hop from the edge to a site ingress. The edge signs every request it forwards with
 * HMAC-SHA256 under the site's ingress secret; the site's gateway recomputes the signature over
 * the same canonical text and refuses the request (401) when it is missing, wrong, stale or seen
 * before. The canonical text binds the method, the request target (path and query), the edge's
 * clock, a one-time nonce, the SHA-256 of the body and every routing header the edge sets, so none
 * of them can be changed or replayed by whoever reaches the ingress. Both sides build it with `siteHopCanonical`;
 * only the HMAC implementation differs (Web Crypto at the edge, node:crypto at the site).
 */
export const SITE_HOP_HEADERS = {
  /** `v1=<64 hex>`; during a secret rotation two, comma-separated (one per secret). */
  signature: "x-greenference-signature",
  /** The edge's clock when it signed, ms since the epoch (decimal). */
  timestamp: "x-greenference-timestamp",
  /** 32 lower-case hex characters, new for every request. */
  nonce: "x-greenference-nonce",
} as const;

/** The headers the edge sets that steer the site: class, instance, output-token hint, plan version, the class's SLO. Absent ones sign as "". */
export const SIGNED_ROUTING_HEADERS = ["x-greenference-class", "x-greenference-instance", "x-greenference-output-tokens", "x-greenference-plan", "x-greenference-slo"] as const;

/** How far the edge's and the site's clocks may disagree before a signed request counts as stale. */
export const SITE_HOP_MAX_SKEW_MS = MAX_CLOCK_SKEW_MS;

/** Signatures one request may carry: the current secret's and, while a rotation overlaps, the previous one's. */
export const SITE_HOP_MAX_SIGNATURES = 2;

const SCHEME = "GF1-HMAC-SHA256";
const HEX64 = /^[0-9a-f]{64}$/;

/** The parsed signing headers of a request. */
export const SiteHopHead = z.object({
  timestampMs: z.coerce.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
  nonce: z.string().regex(/^[0-9a-f]{32}$/, "32 lower-case hex characters"),
  signatures: z.array(z.string().regex(HEX64)).min(1).max(SITE_HOP_MAX_SIGNATURES),
});
export type SiteHopHead = z.infer<typeof SiteHopHead>;

/** What the signature covers. `header` reads a routing header as sent (undefined when absent). */
export interface SiteHopFields {
  method: string;
  /**
   * The request target as sent: the path and, where there is one, the query (`?` included). The
   * edge sends none (`/v1/chat/completions`); the gateway verifies over what it received, so a
   * query appended on the way breaks the signature.
   */
  path: string;
  timestampMs: number;
  nonce: string;
  bodySha256Hex: string;
  header(name: (typeof SIGNED_ROUTING_HEADERS)[number]): string | undefined;
}

/**
 * The text both sides sign: one field per line, routing headers as `name:value` in a fixed order.
 *
 * @example
 * siteHopCanonical({ method: "POST", path: "/v1/chat/completions", timestampMs: 1_700_000_000_000, nonce, bodySha256Hex, header: (h) => headers.get(h) ?? undefined });
 */
export function siteHopCanonical(f: SiteHopFields): string {
  const routing = SIGNED_ROUTING_HEADERS.map((name) => `${name}:${(f.header(name) ?? "").trim()}`);
  return [SCHEME, f.method.toUpperCase(), f.path, String(f.timestampMs), f.nonce, f.bodySha256Hex, ...routing].join("\n");
}

/** `v1=<hex>[,v1=<hex>]` for the given signatures (hex HMACs). */
export function formatSiteHopSignature(signaturesHex: readonly string[]): string {
  return signaturesHex.map((s) => `v1=${s}`).join(",");
}

/**
 * The signing headers of a request, or why they are unusable. Nothing is trusted yet: the caller
 * still checks the time, the HMAC and the nonce.
 */
export function parseSiteHopHead(get: (name: string) => string | undefined): { ok: true; head: SiteHopHead } | { ok: false; message: string } {
  const signature = get(SITE_HOP_HEADERS.signature);
  const timestamp = get(SITE_HOP_HEADERS.timestamp);
  const nonce = get(SITE_HOP_HEADERS.nonce);
  if (signature === undefined || timestamp === undefined || nonce === undefined) {
    return { ok: false, message: `the request is not signed by the edge (needs ${Object.values(SITE_HOP_HEADERS).join(", ")})` };
  }
  // Bounded before splitting: at most SITE_HOP_MAX_SIGNATURES signatures of 67 characters and a separator.
  if (signature.length > SITE_HOP_MAX_SIGNATURES * 68) return { ok: false, message: "malformed signature header" };
  const signatures = signature.split(",").map((s) => s.trim().replace(/^v1=/, ""));
  const parsed = SiteHopHead.safeParse({ timestampMs: /^\d{1,16}$/.test(timestamp) ? timestamp : NaN, nonce, signatures });
  if (!parsed.success) return { ok: false, message: `malformed signing headers: ${parsed.error.issues[0]!.path.join(".")} ${parsed.error.issues[0]!.message}` };
  return { ok: true, head: parsed.data };
}

/** Whether a signing time is within SITE_HOP_MAX_SKEW_MS of the receiver's clock. */
export function isFreshSiteHop(timestampMs: number, nowMs: number, maxSkewMs = SITE_HOP_MAX_SKEW_MS): boolean {
  return Math.abs(nowMs - timestampMs) <= maxSkewMs;
}

/**
 * The secrets the edge signs a site's requests with: the current one and, until `previousUntilMs`,
 * the one it replaced (a rotation's overlap: the site may still hold only the old secret). HMAC
 * needs the secret itself, so the edge stores these in the clear (ControlDO storage).
 */
export interface SiteSigningKeys {
  current: string;
  previous: string | null;
  previousUntilMs: number | null;
}
