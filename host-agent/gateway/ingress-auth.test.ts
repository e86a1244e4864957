import { createHash, createHmac } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { SITE_HOP_VECTOR as V } from "../../src/core/schemas/site-hop-vector.test-helper.ts";
import { SITE_HOP_HEADERS, siteHopCanonical } from "../../src/core/schemas/site-hop.ts";
import { chatBody, cleanUp, gatewayOver, INGRESS_SECRET, signedFetch, started } from "./gateway.test-helper.ts";
import { IngressAuth, signSiteHop } from "./ingress-auth.ts";
import { ReplayCache } from "./replay-cache.ts";
import { answerAfter, launchOf, ScriptedReplica } from "./scripted-replica.test-helper.ts";

afterEach(cleanUp);

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");
const ROUTING = { "content-type": "application/json", "x-greenference-class": "SM", "x-greenference-instance": "a", "x-greenference-plan": "1" };

/** A gateway over one scripted replica (which records what reaches it). */
async function door(secrets?: string[]) {
  const replica = await started(new ScriptedReplica(launchOf("a"), answerAfter(0)));
  const auth = secrets ? { ingress: new IngressAuth({ secrets }) } : {};
  return { replica, ...(await gatewayOver([replica], [{ id: "a", gpus: [0] }], auth)) };
}

/** Sends `body` with `headers` as they are (a request already signed, or not). */
const post = (url: string, headers: Record<string, string>, body = chatBody()) => fetch(`${url}/v1/chat/completions`, { method: "POST", headers, body });

describe("ingress auth: the site's side of the signed hop", () => {
  it("computes the reference signature with node:crypto and accepts the reference request", () => {
    const canonical = siteHopCanonical({ ...V, header: (name) => V.headers[name] });
    expect(createHmac("sha256", V.secret).update(canonical).digest("hex")).toBe(V.signatureHex);
    const auth = new IngressAuth({ secrets: [V.secret], nowMs: () => V.timestampMs + 1_000 });
    const headers = { ...V.headers, [SITE_HOP_HEADERS.timestamp]: String(V.timestampMs), [SITE_HOP_HEADERS.nonce]: V.nonce, [SITE_HOP_HEADERS.signature]: `v1=${V.signatureHex}` };
    const head = auth.head(headers);
    expect(head.ok).toBe(true);
    if (head.ok) expect(auth.verify(head.head, V.method, V.path, headers, Buffer.from(V.body))).toEqual({ ok: true });
  });

  it("remembers nonces until they expire, and refuses a new one rather than forget a live one when full", () => {
    const cache = new ReplayCache(2);
    expect(cache.remember("n1", 1_000, 0)).toBe("new");
    expect(cache.remember("n1", 1_000, 500)).toBe("replayed");
    expect(cache.remember("n2", 5_000, 500)).toBe("new");
    expect(cache.remember("n3", 5_000, 600)).toBe("full");
    // n1 has expired: it is dropped, n3 fits, and n1 is no replay any more (it would be stale anyway).
    expect(cache.remember("n3", 5_000, 1_001)).toBe("new");
    expect(cache.size).toBe(2);
  });
});

describe("ingress auth: a gateway refuses what the edge did not sign, over real HTTP", () => {
  it("answers a request sent straight to the ingress without the edge's signature with 401, changing nothing", async () => {
    const { replica, url, gateway, metric } = await door();
    const r = await post(url, ROUTING);
    expect(r.status).toBe(401);
    expect(await r.json()).toEqual({ error: { message: expect.stringContaining("not signed by the edge"), type: "authentication_error", param: null, code: "invalid_signature" } });
    expect((await fetch(`${url}/v1/completions`, { method: "POST", headers: ROUTING, body: JSON.stringify({ model: "llama3.1-8b", prompt: "x" }) })).status).toBe(401);
    expect(metric("greenference_gateway_unauthorized_total", { reason: "unsigned" })).toBe(2);
    expect([replica.seen.length, metric("greenference_gateway_dispatched_total"), gateway.metrics().queueLength, gateway.heldBytes]).toEqual([0, 0, 0, 0]);
  });

  it("answers a wrong secret, a changed request, a stale or future time, a replay and malformed headers with 401 saying why", async () => {
    const { replica, url, metric } = await door();
    const body = chatBody();
    const signed = (over: { secret?: string; nowMs?: number } = {}) => ({ ...ROUTING, ...signSiteHop(over.secret ?? INGRESS_SECRET, "POST", "/v1/chat/completions", ROUTING, body, over.nowMs) });
    const cases: [string, Record<string, string>, string, string][] = [
      ["wrong secret", signed({ secret: `gfi_${"0".repeat(64)}` }), body, "bad_signature"],
      ["steered instance", { ...signed(), "x-greenference-instance": "b" }, body, "bad_signature"],
      ["output-token hint added", { ...signed(), "x-greenference-output-tokens": "1" }, body, "bad_signature"],
      ["changed body", signed(), chatBody({ max_tokens: 6 }), "bad_signature"],
      ["61 s old", signed({ nowMs: Date.now() - 61_000 }), body, "stale"],
      ["61 s ahead", signed({ nowMs: Date.now() + 61_000 }), body, "stale"],
      ["three signatures", { ...signed(), [SITE_HOP_HEADERS.signature]: Array.from({ length: 3 }, () => `v1=${"a".repeat(64)}`).join(",") }, body, "malformed"],
      ["bad nonce", { ...signed(), [SITE_HOP_HEADERS.nonce]: "x" }, body, "malformed"],
    ];
    for (const [name, headers, sent, reason] of cases) {
      const before = metric("greenference_gateway_unauthorized_total", { reason });
      const r = await post(url, headers, sent);
      expect([name, r.status, ((await r.json()) as { error: { type: string } }).error.type]).toEqual([name, 401, "authentication_error"]);
      expect([name, metric("greenference_gateway_unauthorized_total", { reason }) - before]).toEqual([name, 1]);
    }
    expect(replica.seen).toHaveLength(0);
    // The same signed request twice: served once, then refused as a replay.
    const once = signed();
    expect((await post(url, once, body)).status).toBe(200);
    const again = await post(url, once, body);
    expect([again.status, ((await again.json()) as { error: { message: string } }).error.message]).toEqual([401, "this signed request was already received (a replay)"]);
    expect(replica.seen).toHaveLength(1);
  });

  it("covers the query: a query appended to a signed request is refused (401 bad_signature, on POST and GET), one signed with it verifies", async () => {
    const { replica, url, metric } = await door();
    const body = chatBody();
    const before = metric("greenference_gateway_unauthorized_total", { reason: "bad_signature" });
    const signedPath = { ...ROUTING, ...signSiteHop(INGRESS_SECRET, "POST", "/v1/chat/completions", ROUTING, body) };
    const appended = await fetch(`${url}/v1/chat/completions?foo=bar`, { method: "POST", headers: signedPath, body });
    expect([appended.status, ((await appended.json()) as { error: { code: string } }).error.code]).toEqual([401, "invalid_signature"]);
    const models = await fetch(`${url}/v1/models?foo=bar`, { headers: signSiteHop(INGRESS_SECRET, "GET", "/v1/models", {}, "") });
    expect(models.status).toBe(401);
    expect(metric("greenference_gateway_unauthorized_total", { reason: "bad_signature" }) - before).toBe(2);
    expect(replica.seen).toHaveLength(0);
    // The signed text's path is the request target as sent: signed with its query, the same request verifies.
    const withQuery = { ...ROUTING, ...signSiteHop(INGRESS_SECRET, "POST", "/v1/chat/completions?foo=bar", ROUTING, body) };
    expect((await fetch(`${url}/v1/chat/completions?foo=bar`, { method: "POST", headers: withQuery, body })).status).toBe(200);
  });

  it("accepts the current and the previous secret during a rotation, and the edge's two signatures", async () => {
    const previous = `gfi_${"9".repeat(64)}`;
    const { url } = await door([INGRESS_SECRET, previous]);
    const body = chatBody();
    for (const secret of [INGRESS_SECRET, previous]) expect((await post(url, { ...ROUTING, ...signSiteHop(secret, "POST", "/v1/chat/completions", ROUTING, body) }, body)).status).toBe(200);
    // The edge mid-rotation: one signature under a secret this site does not hold yet, one under its current one.
    const unknown = signSiteHop(`gfi_${"1".repeat(64)}`, "POST", "/v1/chat/completions", ROUTING, body);
    const both = { ...unknown, [SITE_HOP_HEADERS.signature]: `${unknown[SITE_HOP_HEADERS.signature]},v1=${createHmac("sha256", INGRESS_SECRET).update(siteHopCanonical({ method: "POST", path: "/v1/chat/completions", timestampMs: Number(unknown[SITE_HOP_HEADERS.timestamp]), nonce: unknown[SITE_HOP_HEADERS.nonce]!, bodySha256Hex: sha256(body), header: (h) => (ROUTING as Record<string, string>)[h] })).digest("hex")}` };
    expect((await post(url, { ...ROUTING, ...both }, body)).status).toBe(200);
  });

  it("answers a signed body that is not JSON by its media type with 415", async () => {
    const { replica, url } = await door();
    const r = await signedFetch(`${url}/v1/chat/completions`, { method: "POST", headers: { ...ROUTING, "content-type": "text/plain" }, body: chatBody() });
    expect([r.status, ((await r.json()) as { error: { code: string } }).error.code]).toEqual([415, "unsupported_media_type"]);
    expect(replica.seen).toHaveLength(0);
  });
});
