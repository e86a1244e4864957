import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import { formatSiteHopSignature, isFreshSiteHop, parseSiteHopHead, SITE_HOP_HEADERS, SITE_HOP_MAX_SKEW_MS, siteHopCanonical, type SiteHopHead } from "../../src/core/schemas/site-hop.ts";
import { ReplayCache } from "./replay-cache.ts";

/** Why the gateway refused a request at its door. */
export type IngressRefusal = "unsigned" | "malformed" | "stale" | "bad_signature" | "replayed" | "replay_cache_full";

export type IngressVerdict = { ok: true } | { ok: false; status: 401 | 503; reason: IngressRefusal; message: string };

export interface IngressAuthOptions {
  /** The site's ingress secrets: the current one first, then (during a rotation) the previous. */
  secrets: readonly string[];
  nowMs?: () => number;
  /** Nonces remembered at once (each for as long as its request could still count as fresh). */
  replayCacheMax?: number;
}

/** A request's signing headers, checked for presence, form and freshness but not yet for the HMAC. */
export type SignedHead = { ok: true; head: SiteHopHead } | Extract<IngressVerdict, { ok: false }>;

const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);

/**
 * The site's door: a request is served only if the edge signed it (see src/core/schemas/site-hop.ts)
 * with one of the site's ingress secrets, within SITE_HOP_MAX_SKEW_MS of this clock, with a nonce
 * not seen before. `head` is checked before the body is read, `verify` after; a refusal is a 401
 * saying why (503 only when the replay cache is full of live nonces).
 *
 * @example
 * const auth = new IngressAuth({ secrets: [config.ingressSecret] });
 * const head = auth.head(req.headers); // before reading the body
 * if (head.ok) verdict = auth.verify(head.head, "POST", "/v1/chat/completions", req.headers, body);
 */
export class IngressAuth {
  private readonly secrets: Buffer[];
  private readonly now: () => number;
  private readonly replays: ReplayCache;

  constructor(o: IngressAuthOptions) {
    if (o.secrets.length === 0) throw new Error("the site ingress needs at least one ingress secret");
    this.secrets = o.secrets.map((s) => Buffer.from(s, "utf8"));
    this.now = o.nowMs ?? Date.now;
    this.replays = new ReplayCache(o.replayCacheMax ?? 100_000);
  }

  /** The signing headers, when present, well-formed and fresh. */
  head(headers: IncomingHttpHeaders): SignedHead {
    const parsed = parseSiteHopHead((name) => one(headers[name]));
    if (!parsed.ok) return { ok: false, status: 401, reason: parsed.message.startsWith("the request is not signed") ? "unsigned" : "malformed", message: parsed.message };
    const nowMs = this.now();
    if (!isFreshSiteHop(parsed.head.timestampMs, nowMs)) {
      const skewS = Math.round((parsed.head.timestampMs - nowMs) / 1000);
      return { ok: false, status: 401, reason: "stale", message: `the edge signed this request ${Math.abs(skewS)} s ${skewS > 0 ? "ahead of" : "behind"} the site's clock (at most ${SITE_HOP_MAX_SKEW_MS / 1000} s): check both clocks (NTP)` };
    }
    return parsed;
  }

  /**
   * Whether one of the head's signatures is the HMAC of this request under one of the site's
   * secrets, and its nonce is new. `target` is the request target as received (`req.url`: the path
   * and any query), so a query the edge did not sign fails.
   */
  verify(head: SiteHopHead, method: string, target: string, headers: IncomingHttpHeaders, body: Buffer): IngressVerdict {
    const canonical = siteHopCanonical({
      method,
      path: target,
      timestampMs: head.timestampMs,
      nonce: head.nonce,
      bodySha256Hex: createHash("sha256").update(body).digest("hex"),
      header: (name) => one(headers[name]),
    });
    const given = head.signatures.map((s) => Buffer.from(s, "hex"));
    let match = false;
    for (const secret of this.secrets) {
      const expected = createHmac("sha256", secret).update(canonical).digest();
      for (const g of given) match = timingSafeEqual(expected, g) || match;
    }
    if (!match) return { ok: false, status: 401, reason: "bad_signature", message: "the edge's signature does not verify under this site's ingress secret (a different secret, or the request was changed on the way)" };
    const seen = this.replays.remember(head.nonce, head.timestampMs + SITE_HOP_MAX_SKEW_MS, this.now());
    if (seen === "replayed") return { ok: false, status: 401, reason: "replayed", message: "this signed request was already received (a replay)" };
    if (seen === "full") return { ok: false, status: 503, reason: "replay_cache_full", message: "the site cannot remember more signed requests right now" };
    return { ok: true };
  }
}

/**
 * Signs a request to a site ingress as the edge does (node:crypto): for tools and tests that talk
 * to a gateway directly, e.g. `bench e2e`'s latency probe.
 *
 * @example
 * const headers = { ...routing, ...signSiteHop(secret, "POST", "/v1/chat/completions", routing, body) };
 */
export function signSiteHop(secret: string, method: string, path: string, headers: Readonly<Record<string, string>>, body: string | Buffer, nowMs = Date.now()): Record<string, string> {
  const nonce = randomBytes(16).toString("hex");
  const canonical = siteHopCanonical({ method, path, timestampMs: nowMs, nonce, bodySha256Hex: createHash("sha256").update(body).digest("hex"), header: (name) => headers[name] });
  const signature = createHmac("sha256", secret).update(canonical).digest("hex");
  return { [SITE_HOP_HEADERS.timestamp]: String(nowMs), [SITE_HOP_HEADERS.nonce]: nonce, [SITE_HOP_HEADERS.signature]: formatSiteHopSignature([signature]) };
}
