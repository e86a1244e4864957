import { createScheduledController, env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { controlStub } from "../../durable-objects/control-do.ts";
import { defaultCronDeps } from "../../functions/cron-deps.ts";
import { runPlannerLong } from "../../functions/planner-long.ts";
import { runScheduled } from "../../functions/schedules.ts";
import type { PlanningInput } from "../../src/core/planning/planning-input.ts";
import { fakePlanner, PROFILE_TABLE, withFleetPlanner } from "./fake-planner.ts";
import { NOW, sourcesFleet } from "./forecast-fixture.ts";

const PLANNER = "*/5 * * * *";
const decisions = (n: number) => ({ 'greenference_route_decisions_total{class="AA",pool="AA",site="p1",outcome="own"}': n });

function fleet() {
  const f = sourcesFleet("heron", { p1: { kind: "fixed", gPerKwh: 50 }, p2: { kind: "fixed", gPerKwh: 300 }, p3: { kind: "fixed", gPerKwh: 300 } });
  f.sites[1]!.power = { kind: "wind", series: { kind: "forecast", forecastId: "p2-wind" }, peakMw: 1, rightSizingPercentile: 10 } as never;
  f.sites[2]!.power = { kind: "grid", region: "r" } as never;
  return f;
}

async function plan(t: number, planner: ReturnType<typeof fakePlanner>) {
  await runScheduled(createScheduledController({ scheduledTime: t, cron: PLANNER }), env, defaultCronDeps({ policies: withFleetPlanner("heron", planner) }));
  return (await controlStub(env).cronRuns())["planner-long"]?.[0];
}

describe("Planner-L cron", () => {
  it("says what is missing: a fleet, then a profile table", async () => {
    expect(await plan(NOW, fakePlanner([]))).toMatchObject({ status: "skipped", message: "no fleet is configured" });
    await controlStub(env).setFleet(fleet());
    expect((await plan(NOW, fakePlanner([])))?.message).toBe("fake-planner-l: no profile table for this fleet's models and GPUs (PUT /admin/v1/profile)");
  });

  it("assembles inputs from ControlDO (fleet, power forecasts, measured demand) and stores the plan", async () => {
    const control = controlStub(env);
    await control.setFleet(fleet());
    expect((await control.putProfile(PROFILE_TABLE)).ok).toBe(true);
    const seen: PlanningInput[] = [];
    await control.addMetrics(decisions(100));
    expect(await plan(NOW, fakePlanner(seen))).toMatchObject({ status: "skipped", message: "fake-planner-l: no demand measured or forecast yet; the current plan stays" });

    await control.addMetrics(decisions(900)); // 900 more requests over 15 minutes: 1 req/s
    await control.putForecasts({ kind: "power_available", unit: "MW", source: "operator", issuedAtMs: NOW, subject: { kind: "site", id: "p2" }, points: [{ tMs: NOW, value: 0.02 }, { tMs: NOW + 600_000, value: 0.012 }, { tMs: NOW + 900_000, value: 0.001 }] });
    const run = await plan(NOW + 900_000, fakePlanner(seen));
    expect(run).toMatchObject({ status: "ok", message: "fake-planner-l: plan version 1, 3 instance entries at 3 sites" });
    const input = seen[0]!;
    expect(input.classes.map((c) => [c.id, c.demandRps])).toEqual([["AA", 1]]);
    expect(Object.fromEntries(input.sites.map((s) => [s.id, s.powerW]))).toEqual({ p1: 20_000, p2: 1_000, p3: 8 * 700 * 1.82 });
    expect(input).toMatchObject({ version: 1, model: "m", variant: "base", nowMs: NOW + 900_000 });
    expect((await control.getPlan())?.version).toBe(1);

    // A load forecast above the measured rate wins (Heron plans for the slot's peak).
    await control.putForecasts({ kind: "load", unit: "req/s", source: "operator", issuedAtMs: NOW, subject: { kind: "class", id: "AA" }, points: [{ tMs: NOW, value: 5 }] });
    await plan(NOW + 1_800_000, fakePlanner(seen));
    expect(seen[1]!.classes[0]!.demandRps).toBe(5);
    expect(seen[1]!.previous?.version).toBe(1);
    expect((await control.getPlan())?.version).toBe(2);
  });

  it("keeps the current plan when the planner fails or returns a version that is not newer", async () => {
    const control = controlStub(env);
    await control.setFleet(fleet());
    const current = (await control.getPlan())?.version;
    expect(current).toBeGreaterThan(0);
    const failed = await plan(NOW + 2_700_000, fakePlanner([], { fail: true }));
    expect(failed).toMatchObject({ status: "error", message: "fake-planner-l failed: solver blew up" });
    const stale = await plan(NOW + 3_600_000, fakePlanner([], { version: 1 }));
    expect(stale?.status).toBe("error");
    expect(stale?.message).toContain(`plan version 1 was refused: plan version 1 is not newer than the current version ${current}`);
    expect((await control.getPlan())?.version).toBe(current);
  });

  it("blames the policy (unplannable) for a planner that throws or makes a plan that does not fit the fleet, not for a version the store holds newer", async () => {
    const run = (planner: ReturnType<typeof fakePlanner>) => runPlannerLong(env, NOW + 4_500_000, defaultCronDeps({ policies: withFleetPlanner("heron", planner) }), { force: true });
    expect(await run(fakePlanner([], { fail: true }))).toMatchObject({ status: "error", unplannable: true });
    const unfit = await run(fakePlanner([], { gpu: 99 }));
    expect(unfit).toMatchObject({ status: "error", unplannable: true, message: expect.stringContaining("plan does not fit the fleet") });
    const stale = await run(fakePlanner([], { version: 1 }));
    expect(stale.status).toBe("error");
    expect(stale.unplannable).toBeUndefined();
  });

  it("plans only when the policy's cadence is due since the plan in force was made", async () => {
    const control = controlStub(env);
    await control.setFleet(fleet());
    await control.putProfile(PROFILE_TABLE);
    await control.putForecasts({ kind: "load", unit: "req/s", source: "operator", issuedAtMs: NOW, subject: { kind: "class", id: "AA" }, points: [{ tMs: NOW, value: 2 }] });
    const seen: PlanningInput[] = [];
    const every30 = fakePlanner(seen, { cadenceMs: 30 * 60_000 });
    expect((await plan(NOW + 10_800_000, every30))?.status).toBe("ok");
    const made = (await control.getPlan())!.version;
    const early = await plan(NOW + 10_800_000 + 25 * 60_000, every30);
    expect(early).toMatchObject({ status: "skipped", message: `fake-planner-l: the plan in force is ${made}; the next is due in 270 s (every 30 min)` });
    expect((await plan(NOW + 10_800_000 + 30 * 60_000, every30))?.status).toBe("ok");
    expect((await control.getPlan())!.version).toBe(made + 1);
    expect(seen).toHaveLength(2);
  });
  it("gives each class the mean request the edge answered since the last run, once it answered enough", async () => {
    const control = controlStub(env);
    await control.setFleet(fleet());
    expect((await control.putProfile(PROFILE_TABLE)).ok).toBe(true);
    await control.putForecasts({ kind: "power_available", unit: "MW", source: "operator", issuedAtMs: NOW, subject: { kind: "site", id: "p2" }, points: [{ tMs: NOW, value: 0.02 }] });
    const answered = (n: number, prompt: number, generated: number) => ({ 'greenference_answers_total{class="AA"}': n, 'greenference_prompt_tokens_total{class="AA"}': prompt, 'greenference_generation_tokens_total{class="AA"}': generated });
    const seen: PlanningInput[] = [];
    // Each run 15 minutes after the plan before it (the tests before this one made plans up to NOW + 3.5 h).
    const runAt = async (t: number) => expect((await plan(t, fakePlanner(seen)))?.status).toBe("ok");
    await control.addMetrics({ ...decisions(900), ...answered(100, 50_000, 10_000) });
    await runAt(NOW + 14_400_000);
    // Since that run: 900 answers of 1,200 prompt and 80 generated tokens on average.
    await control.addMetrics({ ...decisions(900), ...answered(900, 1_080_000, 72_000) });
    await runAt(NOW + 15_300_000);
    expect(seen.map((i) => i.classes[0]!.meanRequest)).toEqual([{ inputTokens: 500, outputTokens: 100 }, { inputTokens: 1200, outputTokens: 80 }]);
    // Five answers in the next window say too little: no mean request.
    await control.addMetrics({ ...decisions(900), ...answered(5, 5000, 500) });
    await runAt(NOW + 16_200_000);
    expect(seen[2]!.classes[0]!.meanRequest).toBeUndefined();
  });
});
