import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { CRON_RUNS_KEPT, InvalidFleetError, controlStub } from "../../durable-objects/control-do.ts";

const slo = { ttftMs: 400, tbtMs: 80 };

function fleet(siteId = "grid-de-1") {
  return {
    sites: [
      {
        id: siteId,
        region: "eu-central",
        ingressUrl: "https://grid-de-1.example.net",
        gpus: [{ type: "A100-80GB", count: 8 }],
        power: { kind: "fixed", capW: 20_000 },
        carbon: { kind: "fixed", gPerKwh: 350 },
      },
    ],
    models: [{ id: "llama-3-8b" }],
    variants: [{ model: "llama-3-8b", id: "base", quality: 1, memoryGb: 16, parameterCount: 8e9 }],
    classScheme: { name: "single", inputEdges: [], outputEdges: [], inputLabels: ["A"], outputLabels: ["A"] },
    classes: [{ id: "AA", inputBin: 0, outputBin: 0, slo }],
    policy: { kind: "dynamollm", weights: { energy: 1 } },
  };
}

describe("ControlDO fleet", () => {
  it("stores a valid fleet with defaults filled", async () => {
    const control = controlStub(env);
    expect(await control.getFleet()).toBeNull();
    const stored = await control.setFleet(fleet());
    expect(stored.policy.weights).toEqual({ carbon: 0, energy: 1, latency: 0, accuracy: 0 });
    expect((await control.getFleet())?.sites[0]?.id).toBe("grid-de-1");
  });

  it("rejects a bad fleet and keeps the previous one, in memory and in storage", async () => {
    const control = controlStub(env);
    await control.setFleet(fleet());
    const bad = fleet("grid-fr-1");
    bad.classes = [];
    // Called on the instance: a rejecting DO RPC leaks an unhandled rejection in the Workers Vitest pool.
    const attempt = runInDurableObject(control, (instance) => instance.setFleet(bad));
    await expect(attempt).rejects.toThrow(InvalidFleetError);
    await expect(runInDurableObject(control, (instance) => instance.setFleet(bad))).rejects.toThrow(/classes/);
    expect((await control.getFleet())?.sites[0]?.id).toBe("grid-de-1");
    const persisted = await runInDurableObject(control, (_, state) => state.storage.get<{ sites: { id: string }[] }>("fleet"));
    expect(persisted?.sites[0]?.id).toBe("grid-de-1");
  });
});

describe("ControlDO cron runs", () => {
  it("keeps the newest runs per handler, newest first", async () => {
    const control = controlStub(env);
    for (let i = 0; i < CRON_RUNS_KEPT + 5; i++) await control.recordCronRun("planner-long", i * 900_000, { status: "ok" });
    await control.recordCronRun("forecast-refresh", 42, { status: "error", message: "upstream 503" });
    const runs = await control.cronRuns();
    expect(Object.keys(runs).sort()).toEqual(["forecast-refresh", "planner-long"]);
    expect(runs["planner-long"]).toHaveLength(CRON_RUNS_KEPT);
    expect(runs["planner-long"]?.[0]?.scheduledTimeMs).toBe((CRON_RUNS_KEPT + 4) * 900_000);
    expect(runs["planner-long"]?.at(-1)?.scheduledTimeMs).toBe(5 * 900_000);
    expect(runs["forecast-refresh"]?.[0]).toMatchObject({ name: "forecast-refresh", scheduledTimeMs: 42, status: "error", message: "upstream 503" });
  });
});
