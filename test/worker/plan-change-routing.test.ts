import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { chatBody, completion, Edge, telemetry } from "./edge-fixture.ts";

/** A heartbeat from `site` that runs only `ready` (the plan before's instances, say), all ready. */
async function runsOnly(site: string, ready: string[]): Promise<void> {
  const t = telemetry(site);
  await env.SITE.get(env.SITE.idFromName(site)).heartbeat({ ...t, instances: ready.map((id) => ({ ...t.instances[0]!, id })) });
}

/** SS routes eu-a/i0 x3 and eu-b/i0 x1 from AMS (edge-fixture's plan). */
describe("routing while the sites apply a new plan", () => {
  it("sends a class to the site that runs its instance, not to one that still runs the plan before", async () => {
    const edge = new Edge();
    await edge.setUp(300);
    await runsOnly("eu-a", ["SS-tp2"]);
    edge.app.context.cache.invalidate();
    edge.sites.on("eu-a", () => completion()).on("eu-b", () => completion());
    for (let i = 0; i < 8; i++) expect((await edge.chat(chatBody())).headers.get("x-greenference-site")).toBe("eu-b");
    expect(edge.sites.calls.map((c) => c.site)).not.toContain("eu-a");
  });
});
