import { describe, expect, it } from "vitest";
import { isFreshSiteHop, parseSiteHopHead, SITE_HOP_HEADERS, siteHopCanonical } from "./site-hop.ts";
import { SITE_HOP_VECTOR as V } from "./site-hop-vector.test-helper.ts";

const head = (over: Record<string, string | undefined> = {}) => {
  const h: Record<string, string | undefined> = { [SITE_HOP_HEADERS.signature]: `v1=${"a".repeat(64)}`, [SITE_HOP_HEADERS.timestamp]: "1700000000000", [SITE_HOP_HEADERS.nonce]: "f".repeat(32), ...over };
  return (name: string) => h[name];
};

describe("site hop contract", () => {
  it("signs method, path, time, nonce, body digest and every routing header, absent ones as empty", () => {
    const text = siteHopCanonical({ ...V, header: (name) => V.headers[name] });
    expect(text.split("\n")).toEqual([
      "GF1-HMAC-SHA256",
      "POST",
      "/v1/chat/completions",
      "1700000000000",
      V.nonce,
      V.bodySha256Hex,
      "x-greenference-class:SS",
      "x-greenference-instance:i0",
      "x-greenference-output-tokens:",
      "x-greenference-plan:7",
      "x-greenference-slo:ttft=500;tbt=50",
    ]);
  });

  it("parses one or two signatures and refuses missing or malformed headers", () => {
    expect(parseSiteHopHead(head())).toEqual({ ok: true, head: { timestampMs: 1_700_000_000_000, nonce: "f".repeat(32), signatures: ["a".repeat(64)] } });
    expect(parseSiteHopHead(head({ [SITE_HOP_HEADERS.signature]: `v1=${"a".repeat(64)},v1=${"b".repeat(64)}` }))).toMatchObject({ ok: true, head: { signatures: ["a".repeat(64), "b".repeat(64)] } });
    expect(parseSiteHopHead(head({ [SITE_HOP_HEADERS.signature]: undefined }))).toMatchObject({ ok: false, message: expect.stringContaining("not signed") });
    for (const bad of [
      { [SITE_HOP_HEADERS.signature]: Array.from({ length: 3 }, () => `v1=${"a".repeat(64)}`).join(",") },
      { [SITE_HOP_HEADERS.signature]: "v1=xyz" },
      { [SITE_HOP_HEADERS.timestamp]: "1e12" },
      { [SITE_HOP_HEADERS.timestamp]: "9".repeat(40) },
      { [SITE_HOP_HEADERS.nonce]: "F".repeat(32) },
    ]) {
      expect(parseSiteHopHead(head(bad)).ok).toBe(false);
    }
  });

  it("counts a signing time within 60 s either way as fresh", () => {
    expect(isFreshSiteHop(1_000_000, 1_060_000)).toBe(true);
    expect(isFreshSiteHop(1_000_000, 940_000)).toBe(true);
    expect(isFreshSiteHop(1_000_000, 1_060_001)).toBe(false);
    expect(isFreshSiteHop(1_060_001, 1_000_000)).toBe(false);
  });
});
