import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { controlStub } from "../../durable-objects/control-do.ts";
import { chatBody, Edge, plan, telemetry } from "./edge-fixture.ts";
import { changedKeys, edgeState } from "./state-snapshot.ts";

/**
 * A Durable Object whose storage fails. Under wrangler dev there is no honest way to make
 * workerd's SQLite storage fail, so the fault is injected here, in workerd: the object's
 * `storage.put` throws as a failed write does.
 */
async function withFailingWrites<T>(stub: DurableObjectStub, run: () => Promise<T>): Promise<T> {
  const restore = await runInDurableObject(stub, (_instance, state) => {
    const storage = state.storage as unknown as { put: (...a: unknown[]) => Promise<void> };
    const put = storage.put;
    storage.put = () => Promise.reject(new Error("injected storage failure: SQLITE_IOERR"));
    return () => void (storage.put = put);
  });
  try {
    return await run();
  } finally {
    await runInDurableObject(stub, () => restore());
  }
}

describe("a Durable Object storage error", () => {
  it("answers writes with an error that says why, changes nothing, keeps serving inference, and recovers at once", async () => {
    const edge = new Edge();
    await edge.setUp(300);
    const control = controlStub(env) as unknown as DurableObjectStub;
    const before = await edgeState(["eu-a"]);
    const answers = await withFailingWrites(control, async () => {
      const rs: Response[] = [];
      for (let v = 301; v <= 305; v++) rs.push(await edge.admin("PUT", "/admin/v1/plan", plan(v)));
      // Inference reads the cached snapshot and needs no write: it is still served.
      for (let i = 0; i < 5; i++) rs.push(await edge.chat(chatBody()));
      return Promise.all(rs.map(async (r) => ({ status: r.status, text: await r.text() })));
    });
    const writes = answers.slice(0, 5);
    for (const w of writes) {
      expect(w.status).toBe(500);
      expect((JSON.parse(w.text) as { error: { message: string } }).error.message).toContain("injected storage failure");
    }
    expect(answers.slice(5).map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    const after = await edgeState(["eu-a"]);
    expect(changedKeys(before, after)).toEqual([]);
    expect((await controlStub(env).getPlan())?.version).toBe(300);
    // Healed: the next write goes through.
    expect((await edge.admin("PUT", "/admin/v1/plan", plan(301))).status).toBe(200);
  });

  it("a SiteDO that cannot store a heartbeat answers with an error and keeps its last telemetry", async () => {
    const edge = new Edge();
    await edge.setUp(400);
    const site = env.SITE.get(env.SITE.idFromName("eu-a"));
    const { token } = (await (await edge.admin("POST", "/admin/v1/sites/eu-a/token")).json()) as { token: string };
    const last = await site.latestTelemetry();
    const r = await withFailingWrites(site as unknown as DurableObjectStub, () =>
      edge.fetch("/agent/v1/sites/eu-a/heartbeat", { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify({ ...telemetry("eu-a"), appliedPlanVersion: 77 }) }),
    );
    expect(r.status).toBeGreaterThanOrEqual(500);
    expect(((await r.json()) as { error: { message: string } }).error.message).toContain("injected storage failure");
    expect((await site.latestTelemetry())?.appliedPlanVersion).toBe(last?.appliedPlanVersion);
  });
});
