import { describe, expect, it } from "vitest";
import { FailingSites } from "../../src/worker/failing-sites.ts";
import { chatBody, completion, Edge, takeDown } from "./edge-fixture.ts";

/** SS routes eu-a x3 and eu-b x1 from AMS (edge-fixture's plan); the hold is wrangler.toml's 10 s. */
describe("routing around a site that just failed", () => {
  it("passes a site over for the hold after it fails before its first byte, then probes it once", async () => {
    let nowMs = Date.now();
    const edge = new Edge({ now: () => nowMs });
    await edge.setUp(120);
    let euADown = true;
    edge.sites.on("eu-a", () => (euADown ? new Response("down", { status: 503 }) : completion()));
    const first = await edge.chat(chatBody());
    expect([first.status, first.headers.get("x-greenference-site"), first.headers.get("x-greenference-attempts")]).toEqual([200, "eu-b", "2"]);

    edge.sites.calls.length = 0;
    for (let i = 0; i < 8; i++) expect((await edge.chat(chatBody())).headers.get("x-greenference-site")).toBe("eu-b");
    expect(edge.sites.calls.map((c) => c.site)).not.toContain("eu-a");

    // The hold ends; eu-a serves again: the first request routed there is the probe, and it serves.
    nowMs += 10_001;
    euADown = false;
    edge.sites.calls.length = 0;
    const sites: string[] = [];
    for (let i = 0; i < 12; i++) sites.push((await edge.chat(chatBody())).headers.get("x-greenference-site")!);
    expect(sites).toContain("eu-a");
    expect(sites.filter((s) => s === "eu-a").length).toBeGreaterThan(sites.filter((s) => s === "eu-b").length);
  });

  it("still tries a failing site when no other site can serve", async () => {
    const edge = new Edge();
    await edge.setUp(130);
    await takeDown("eu-b");
    edge.app.context.cache.invalidate();
    let calls = 0;
    edge.sites.on("eu-a", () => (++calls === 1 ? new Response("down", { status: 503 }) : completion()));
    expect((await edge.chat(chatBody())).status).toBe(502);
    const again = await edge.chat(chatBody());
    expect([again.status, again.headers.get("x-greenference-site")]).toEqual([200, "eu-a"]);
  });
});

describe("FailingSites", () => {
  it("holds a failed site, lets one probe through when the hold ends, and forgets it once served", () => {
    const f = new FailingSites();
    f.failed("a", 0, 1000);
    expect([...f.avoided(999)]).toEqual(["a"]);
    expect([...f.avoided(1000)]).toEqual([]);
    f.routed("a", 1000); // the probe: held again while it runs
    expect([...f.avoided(1500)]).toEqual(["a"]);
    f.served("a");
    expect([...f.avoided(1500)]).toEqual([]);
  });

  it("doubles the hold of a site whose probe fails, up to 16 times the base", () => {
    const f = new FailingSites();
    f.failed("a", 0, 1000);
    f.routed("a", 1000);
    f.failed("a", 1100, 1000); // the probe failed: held 2 s
    expect([...f.avoided(3099)]).toEqual(["a"]);
    expect([...f.avoided(3100)]).toEqual([]);
    // Failures of requests already in flight do not lengthen the hold; failed probes double it, up to 16 s.
    f.failed("a", 1200, 1000);
    expect([...f.avoided(3200)]).toEqual([]);
    let t = 3200;
    for (let i = 0; i < 6; i++) {
      t += 20_000;
      f.routed("a", t);
      f.failed("a", t, 1000);
    }
    expect([...f.avoided(t + 16_000 - 1)]).toEqual(["a"]);
    expect([...f.avoided(t + 16_000)]).toEqual([]);
  });
});
