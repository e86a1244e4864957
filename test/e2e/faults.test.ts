import { createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LocalStack } from "../../lib/stack/local-stack.ts";
import type { RequestOutcome } from "../../lib/stack/request-outcome.ts";
import { setWeightedPlan, waitFor } from "../../lib/stack/weighted-plan.ts";
import { stackLog, startTestStack } from "./stack.test-helper.ts";

let stack: LocalStack;

beforeAll(async () => {
  stack = await startTestStack({ loadRps: 6 }, { autopilot: false });
}, 240_000);
afterAll(() => stack?.stop(), 60_000);

type SiteRow = { site: string; health: { healthy: boolean; appliedPlanVersion: number | null } };
const sites = () => stack.admin<SiteRow[]>("GET", "/admin/v1/sites");
const planVersion = async () => (await stack.admin<{ version: number }>("GET", "/admin/v1/plan")).version;

/** A request that was neither served nor answered with an error saying why. */
const lost = (o: RequestOutcome) => !o.ok && (o.status === 0 || !o.error);

// Bounded: each fault runs for seconds on loopback; the whole file takes about a minute after start-up.
describe("faults on the local stack", () => {
  it("an agent killed under load: nothing unstarted is lost, and routing leaves the site within 10 s", async () => {
    await setWeightedPlan(stack, { "wind-bpat": 1, "wind-erco": 1, "grid-ciso": 1 });
    const load = stack.load!;
    const before = load.outcomes.length;
    load.start();
    await new Promise((r) => setTimeout(r, 5_000));
    const victim = stack.sites.find((s) => s.site.id === "wind-erco")!;
    const killedAt = Date.now();
    victim.process!.killNow();
    await waitFor(async () => (await sites()).some((s) => s.site === "wind-erco" && !s.health.healthy), 15_000, "wind-erco marked unhealthy");
    const unhealthyAfterS = (Date.now() - killedAt) / 1000;
    expect(stackLog.some((l) => l.startsWith("[wind-erco] its agent exited (SIGKILL)"))).toBe(true);
    await new Promise((r) => setTimeout(r, 5_000));
    await load.stop();

    const outcomes = load.outcomes.slice(before);
    expect(outcomes.length).toBeGreaterThan(20); // the trace is bursty: about 6 req/s on average
    expect(unhealthyAfterS).toBeLessThanOrEqual(10);
    // Requests cut mid-stream at the killed site may break (their tokens were already flowing); none other may.
    const broken = outcomes.filter((o) => !o.ok);
    for (const o of broken) {
      expect(lost(o), `lost: ${JSON.stringify(o)}`).toBe(false);
      expect(o.stream && o.site === "wind-erco" && o.startedMs < killedAt, `failed request that had not started streaming at the dead site: ${JSON.stringify(o)}`).toBe(true);
    }
    const retried = outcomes.filter((o) => o.attempts > 1);
    expect(retried.every((o) => o.ok && o.site !== "wind-erco")).toBe(true);
    const lateAtDeadSite = outcomes.filter((o) => o.site === "wind-erco" && o.startedMs > killedAt + unhealthyAfterS * 1000);
    expect(lateAtDeadSite).toEqual([]);

    // Meanwhile another process took the dead agent's ingress port: the restart moves the site to fresh ports.
    const oldIngress = victim.ingressUrl;
    const squatter = createServer();
    await new Promise<void>((resolve, reject) => squatter.once("error", reject).listen(Number(new URL(oldIngress).port), "127.0.0.1", resolve));
    try {
      await stack.startAgent(victim);
    } finally {
      squatter.close();
    }
    expect(victim.ingressUrl).not.toBe(oldIngress);
    await waitFor(async () => (await sites()).every((s) => s.health.healthy), 30_000, "wind-erco healthy again after restart");
    await setWeightedPlan(stack, { "wind-erco": 1 });
    const answer = await stack.load!.send(40, 8, false);
    expect([answer.ok, answer.site], JSON.stringify(answer)).toEqual([true, "wind-erco"]);
  });

  it("a site whose power envelope is cut to zero gets no instances in the next plan, and its traffic goes elsewhere", async () => {
    const v0 = await planVersion();
    await stack.setPowerOverride("wind-bpat", 0);
    const plan = await stack.admin<{ version: number; sites: { site: string; instances: unknown[] }[]; routing: Record<string, { site: string }[]> }>("GET", "/admin/v1/plan");
    expect(plan.version).toBeGreaterThan(v0);
    expect(plan.sites.find((s) => s.site === "wind-bpat")?.instances ?? []).toEqual([]);
    expect(Object.values(plan.routing).flat().some((t) => t.site === "wind-bpat")).toBe(false);
    const answers = await Promise.all(Array.from({ length: 6 }, () => stack.load!.send(40, 8, false)));
    expect(answers.filter((a) => !a.ok || a.site === "wind-bpat"), JSON.stringify(answers)).toEqual([]);
    await stack.setPowerOverride("wind-bpat", null);
  });

  it("when the carbon provider answers 500 the refresh falls back to persistence and a plan is still produced", async () => {
    stack.carbon!.failing = true;
    try {
      await stack.cron("*/5 * * * *");
      const history = await stack.admin<{ cronRuns: Record<string, { status: string; message?: string }[]> }>("GET", "/admin/v1/history");
      const refresh = history.cronRuns["forecast-refresh"]?.[0];
      expect(refresh?.message ?? "").toMatch(/500|fallback|persistence/i);
      const v0 = await planVersion();
      await stack.replan();
      expect(await planVersion()).toBeGreaterThan(v0);
      const answer = await stack.load!.send(40, 8, true);
      expect(answer.ok).toBe(true);
    } finally {
      stack.carbon!.failing = false;
    }
  });

  it("malformed telemetry is refused with a 400 in the OpenAI error shape and the site stays routable", async () => {
    const post = (body: string) =>
      fetch(`${stack.edgeUrl}/agent/v1/sites/grid-ciso/heartbeat`, { method: "POST", headers: { authorization: `Bearer ${stack.siteToken("grid-ciso")}`, "content-type": "application/json" }, body });
    const notJson = await post("{ this is not json");
    expect(notJson.status).toBe(400);
    const wrongShape = await post(JSON.stringify({ site: "grid-ciso", sentAtMs: "yesterday", gpus: "many" }));
    expect(wrongShape.status).toBe(400);
    expect(await wrongShape.json()).toMatchObject({ error: { message: expect.any(String), type: "invalid_request_error" } });
    expect((await sites()).find((s) => s.site === "grid-ciso")?.health.healthy).toBe(true);
    const answer = await stack.load!.send(40, 8, false);
    expect(answer.ok).toBe(true);
  });
});
