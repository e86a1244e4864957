import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { CRON_RUNS_KEPT, controlStub } from "../../durable-objects/control-do.ts";
import { CronRunStore } from "../../durable-objects/cron-run-store.ts";

describe("a cron handler's last run and last success", () => {
  it("outlive the kept runs and their retention, and survive a restart", async () => {
    await runInDurableObject(controlStub(env), async (_, state) => {
      const store = new CronRunStore(state.storage);
      await store.load();
      await store.record("usage-rollup", 1_000, { status: "ok" }, 1_500);
      for (let i = 0; i <= CRON_RUNS_KEPT; i++) await store.record("usage-rollup", 2_000 + i, { status: "error", message: "ledger down" }, 3_000 + i);
      expect(store.all()["usage-rollup"]!.every((r) => r.status === "error")).toBe(true);
      expect(store.lastRuns().get("usage-rollup")).toEqual({ lastRunMs: 3_000 + CRON_RUNS_KEPT, lastOkMs: 1_500 });

      await store.compact(10_000);
      expect(store.all()["usage-rollup"]).toBeUndefined();
      expect(store.lastRuns().get("usage-rollup")).toEqual({ lastRunMs: 3_000 + CRON_RUNS_KEPT, lastOkMs: 1_500 });

      const restarted = new CronRunStore(state.storage);
      await restarted.load();
      expect(restarted.lastRuns().get("usage-rollup")).toEqual({ lastRunMs: 3_000 + CRON_RUNS_KEPT, lastOkMs: 1_500 });
    });
  });

  it("are read from the kept runs where storage predates them", async () => {
    await runInDurableObject(controlStub(env), async (_, state) => {
      const run = (status: "ok" | "error", atMs: number) => ({ name: "legacy", scheduledTimeMs: atMs, recordedAtMs: atMs, status });
      await state.storage.put("cron:legacy", [run("error", 30), run("ok", 20), run("ok", 10)]);
      const store = new CronRunStore(state.storage);
      await store.load();
      expect(store.lastRuns().get("legacy")).toEqual({ lastRunMs: 30, lastOkMs: 20 });
    });
  });

  it("reach the gauges after more failures in a row than runs are kept", async () => {
    const control = controlStub(env);
    await control.recordCronRun("carbon-refresh", 1, { status: "ok" });
    const okAtMs = (await control.cronRuns())["carbon-refresh"]![0]!.recordedAtMs;
    for (let i = 0; i <= CRON_RUNS_KEPT; i++) await control.recordCronRun("carbon-refresh", 2 + i, { status: "error" });
    const gauge = (await control.controlGauges()).cron.find((c) => c.handler === "carbon-refresh");
    expect(gauge?.lastOkMs).toBe(okAtMs);
  });
});
