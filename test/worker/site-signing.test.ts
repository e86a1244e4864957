import { env } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { SITE_HOP_VECTOR as V } from "../../src/core/schemas/site-hop-vector.test-helper.ts";
import { SITE_HOP_HEADERS, siteHopCanonical } from "../../src/core/schemas/site-hop.ts";
import { sha256Hex } from "../../src/edge/secrets.ts";
import { hmacSha256Hex } from "../../src/worker/site-signer.ts";
import { chatBody, Edge, errorOf, fleet, plan, telemetry } from "./edge-fixture.ts";
import { verifySiteHop } from "./site-hop-verifier.ts";

let version = 400;
let edge: Edge;

beforeEach(async () => {
  edge = new Edge({ failureHoldMs: 0 });
  await edge.setUp(++version);
});
afterEach(() => vi.restoreAllMocks());

const signaturesOf = (headers: Headers) => (headers.get(SITE_HOP_HEADERS.signature) ?? "").split(",").filter(Boolean);

describe("signed site hop: the edge's side", () => {
  it("computes the reference signature with Web Crypto", async () => {
    expect(await sha256Hex(V.body)).toBe(V.bodySha256Hex);
    const canonical = siteHopCanonical({ ...V, header: (name) => V.headers[name] });
    expect(await hmacSha256Hex(V.secret, canonical)).toBe(V.signatureHex);
  });

  it("signs every request it forwards over the body and routing headers, with a fresh nonce each time", async () => {
    for (let i = 0; i < 2; i++) expect((await edge.chat(chatBody())).status).toBe(200);
    const [first, second] = edge.sites.calls;
    const secrets = edge.sites.secrets.get("eu-a")!;
    expect(await verifySiteHop(secrets, "POST", "/v1/chat/completions", first!.headers, first!.text)).toBeNull();
    expect(first!.headers.get(SITE_HOP_HEADERS.nonce)).not.toBe(second!.headers.get(SITE_HOP_HEADERS.nonce));
    expect(signaturesOf(first!.headers)).toHaveLength(1);
    // Whoever changes a routing header, the body or the path breaks the signature.
    const steered = new Headers(first!.headers);
    steered.set("x-greenference-instance", "i1");
    expect(await verifySiteHop(secrets, "POST", "/v1/chat/completions", steered, first!.text)).toBe("no signature verifies");
    expect(await verifySiteHop(secrets, "POST", "/v1/chat/completions", first!.headers, first!.text.replace("Hello", "Howdy"))).toBe("no signature verifies");
    expect(await verifySiteHop(secrets, "POST", "/v1/completions", first!.headers, first!.text)).toBe("no signature verifies");
  });

  it("signs with the old secret too while a rotation overlaps, and only with the new one after", async () => {
    const old = edge.sites.secrets.get("eu-a")![0]!;
    const fresh = await edge.issueIngressSecret("eu-a", 600, false);
    // The agent has not been given the new secret yet: it still holds only the old one.
    edge.sites.secrets.set("eu-a", [old]);
    const during = await edge.chat(chatBody());
    expect([during.status, during.headers.get("x-greenference-site")]).toEqual([200, "eu-a"]);
    expect(signaturesOf(edge.sites.calls.at(-1)!.headers)).toHaveLength(2);

    const later = Date.now() + 601_000;
    vi.spyOn(Date, "now").mockReturnValue(later);
    for (const site of ["eu-a", "eu-b"]) await env.SITE.get(env.SITE.idFromName(site)).heartbeat(telemetry(site, later));
    edge.app.context.cache.invalidate();
    edge.sites.secrets.set("eu-a", [fresh]);
    const after = await edge.chat(chatBody());
    expect([after.status, after.headers.get("x-greenference-site")]).toEqual([200, "eu-a"]);
    expect(signaturesOf(edge.sites.calls.at(-1)!.headers)).toHaveLength(1);
  });

  it("treats a site that refuses its signature as failed before the first byte: retried elsewhere, then 502 saying why", async () => {
    edge.sites.secrets.set("eu-a", [`gfi_${"0".repeat(64)}`]);
    const r = await edge.chat(chatBody());
    expect([r.status, r.headers.get("x-greenference-site"), r.headers.get("x-greenference-attempts")]).toEqual([200, "eu-b", "2"]);
    edge.sites.secrets.set("eu-b", [`gfi_${"0".repeat(64)}`]);
    const both = await edge.chat(chatBody());
    expect(both.status).toBe(502);
    expect((await errorOf(both)).message).toMatch(/site eu-a failed: it refused the edge's signature \(HTTP 401: no signature verifies\)/);
  });

  it("does not send a request to a site it holds no ingress secret for, and says how to issue one", async () => {
    // A site that joined the fleet but was never issued a token (nor an ingress secret).
    const joined = plan(++version);
    joined.sites.push({ site: "eu-z", powerCapW: 10_000, instances: [{ ...joined.sites[0]!.instances[0]! }] });
    joined.routing.SS = [{ site: "eu-z", instance: "i0", weight: 1 }];
    await edge.admin("PUT", "/admin/v1/fleet", fleet(["eu-a", "eu-b", "us-c", "eu-z"]));
    expect((await edge.admin("PUT", "/admin/v1/plan", joined)).status).toBe(200);
    await env.SITE.get(env.SITE.idFromName("eu-z")).heartbeat(telemetry("eu-z"));
    edge.app.context.cache.invalidate();
    // eu-z is chosen first and skipped unsent; the request is served at the next choice.
    const r = await edge.chat(chatBody());
    expect([r.status, r.headers.get("x-greenference-attempts"), edge.sites.calls.map((c) => c.site)]).toEqual([200, "2", ["eu-a"]]);
    edge.sites.on("eu-a", () => new Response("down", { status: 503 }));
    const failed = await edge.chat(chatBody());
    expect(failed.status).toBe(502);
    expect((await errorOf(failed)).message).toContain("site eu-z failed: the edge holds no ingress secret for it (an operator issues one: POST /admin/v1/sites/eu-z/ingress-secret)");
    expect(edge.sites.calls.map((c) => c.site)).not.toContain("eu-z");
  });
});

describe("signed site hop: admin API", () => {
  it("issues an ingress secret with every site token, and shows only whether one is issued", async () => {
    const r = await edge.admin("POST", "/admin/v1/sites/eu-a/token");
    expect(r.status).toBe(201);
    const issued = (await r.json()) as { token: string; ingressSecret: string; previousIngressSecretValidUntilMs: number | null };
    expect(issued.ingressSecret).toMatch(/^gfi_[0-9a-f]{64}$/);
    expect(issued.previousIngressSecretValidUntilMs).toBeGreaterThan(Date.now() + 3_500_000);
    const listing = await (await edge.admin("GET", "/admin/v1/sites")).text();
    expect(listing).not.toContain(issued.ingressSecret);
    const eu = (JSON.parse(listing) as { site: string; ingressSecret: { issued: boolean; previousUntilMs: number | null } }[]).find((s) => s.site === "eu-a")!;
    expect(eu.ingressSecret).toMatchObject({ issued: true, previousUntilMs: issued.previousIngressSecretValidUntilMs });
  });

  it("answers a bad overlap with 400 and an unknown site with 404, rotating nothing", async () => {
    const before = edge.sites.secrets.get("eu-a")!;
    for (const q of ["-1", "1.5", "604801", "", "abc"]) {
      const r = await edge.admin("POST", `/admin/v1/sites/eu-a/ingress-secret?overlap_s=${q}`);
      expect(r.status).toBe(400);
      expect((await errorOf(r)).param).toBe("overlap_s");
    }
    expect((await edge.admin("POST", "/admin/v1/sites/nowhere/ingress-secret")).status).toBe(404);
    expect((await edge.chat(chatBody())).status).toBe(200);
    expect(edge.sites.secrets.get("eu-a")).toBe(before);
  });

  it("checks the overlap before issuing a site token: a bad one leaves the token and the secret as they were", async () => {
    const { token } = (await (await edge.admin("POST", "/admin/v1/sites/eu-b/token?overlap_s=0")).json()) as { token: string };
    const ingressOf = async () => ((await (await edge.admin("GET", "/admin/v1/sites")).json()) as { site: string; ingressSecret: unknown }[]).find((s) => s.site === "eu-b")!.ingressSecret;
    const before = await ingressOf();
    expect(before).toMatchObject({ issued: true, previousUntilMs: null });
    const r = await edge.admin("POST", "/admin/v1/sites/eu-b/token?overlap_s=abc");
    expect(r.status).toBe(400);
    expect((await errorOf(r)).param).toBe("overlap_s");
    const beat = await edge.fetch("/agent/v1/sites/eu-b/heartbeat", { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify(telemetry("eu-b")) });
    expect(beat.ok).toBe(true);
    expect(await ingressOf()).toEqual(before);
    expect((await edge.admin("POST", "/admin/v1/sites/nowhere/token")).status).toBe(404);
  });
});
