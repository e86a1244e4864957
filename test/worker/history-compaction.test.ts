import { createExecutionContext, createScheduledController, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../../src/index.ts";
import { controlStub } from "../../durable-objects/control-do.ts";
import { fleet, plan } from "./edge-fixture.ts";

const DAY = 86_400_000;
const T0 = 1_700_000_000_000 - (1_700_000_000_000 % DAY);

async function compact(scheduledTime: number) {
  const ctx = createExecutionContext();
  worker.scheduled(createScheduledController({ scheduledTime, cron: "0 3 * * *" }), env, ctx);
  await waitOnExecutionContext(ctx);
  return (await controlStub(env).cronRuns())["history-compaction"]?.[0];
}

const carbon = (site: string, issuedAtMs: number, value: number) => ({
  kind: "carbon_average",
  unit: "gCO2/kWh",
  source: "test",
  issuedAtMs,
  subject: { kind: "site", id: site },
  points: [{ tMs: issuedAtMs, value }],
});

describe("history compaction cron", () => {
  it("is skipped when nothing is beyond retention", async () => {
    expect(await compact(T0)).toMatchObject({ status: "skipped", message: "nothing beyond retention" });
  });

  it("thins and drops forecasts, cron runs, plan summaries and trigger firings beyond retention", async () => {
    const control = controlStub(env);
    await control.setFleet(fleet());
    for (let t = 0; t < 2 * DAY; t += 1_200_000) await control.putForecasts(carbon("eu-b", T0 + t, 100 + (t % 3_600_000 === 0 ? 6 : 0)), T0 + t);
    await control.putForecasts(carbon("gone", T0, 1), T0);
    for (let v = 1; v <= 3; v++) {
      await control.putPlan(plan(v));
      await control.recordCronRun("planner-long", T0 + v, { status: "ok" });
    }
    await control.recordCarbonTrigger({ atMs: T0, policy: "clover", reason: "test", moves: [], optimiser: null, outcome: { status: "skipped" } }, { "eu-a": 1 });

    const now = T0 + 8 * DAY;
    const run = await compact(now);
    expect(run?.status).toBe("ok");
    expect(run?.message).toContain("seriesDropped 1");
    expect(run?.message).toContain("carbonTriggersDropped 1");
    expect(run?.message).toMatch(/cronRunsDropped [1-9]/);
    expect(await control.latestForecast("carbon_average:site:gone")).toBeNull();
    const observed = (await control.forecastHistory("carbon_average:site:eu-b")).observed;
    expect(observed[0]).toEqual({ tMs: T0 + DAY, value: 102 }); // the first day dropped, then hourly means of (106 + 100 + 100)
    expect((await control.cronRuns())["planner-long"]).toBeUndefined();
    expect(await control.carbonTriggers()).toEqual([]);

    const summaries = await control.planHistory();
    expect(summaries.map((s) => s.version)).toEqual([3, 2, 1]); // stored now-ish: within 30 days
    const later = await compact(Date.now() + 31 * DAY);
    expect(later?.message).toContain("planSummariesDropped 2");
    expect((await control.planHistory()).map((s) => s.version)).toEqual([3]);
    expect((await control.getPlan())?.version).toBe(3);
    // Their full copies go with them: kept only while their summary was, they would stay for good.
    expect((await control.planVersion(2)).ok).toBe(false);
    expect((await control.planVersion(3)).ok).toBe(true);
  });
});
