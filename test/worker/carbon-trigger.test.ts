import { createScheduledController, env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { controlStub } from "../../durable-objects/control-do.ts";
import { runScheduled } from "../../functions/schedules.ts";
import type { PlanningInput } from "../../src/core/planning/planning-input.ts";
import { fakePlanner, PROFILE_TABLE, withFleetPlanner } from "./fake-planner.ts";
import { FakeProviders, NOW, providerEnv, sourcesFleet } from "./forecast-fixture.ts";

const REFRESH = "*/5 * * * *";

/** The 5-minute cron with the clover entry's planner replaced by one that records its runs. */
async function refresh(providers: FakeProviders, t: number, seen: PlanningInput[], fail = false): Promise<void> {
  const deps = providers.deps({ policies: withFleetPlanner("clover", fakePlanner(seen, { fail })) });
  await runScheduled(createScheduledController({ scheduledTime: t, cron: REFRESH }), providerEnv, deps);
}

async function cloverFleet() {
  const control = controlStub(env);
  await control.setFleet(sourcesFleet("clover", { c1: { kind: "electricitymaps", zone: "DE" }, c2: { kind: "fixed", gPerKwh: 100 } }));
  await control.putProfile(PROFILE_TABLE);
  await control.putForecasts({ kind: "load", unit: "req/s", source: "operator", issuedAtMs: NOW, subject: { kind: "class", id: "AA" }, points: [{ tMs: NOW, value: 2 }] });
  return control;
}

describe("the policy's carbon trigger", () => {
  it("re-optimises through the registry on a move of more than 5% from the value at the last optimisation, and logs it", async () => {
    const control = await cloverFleet();
    const providers = new FakeProviders();
    const seen: PlanningInput[] = [];

    providers.emValue = 200;
    await refresh(providers, NOW, seen); // no baseline yet: the first optimisation
    expect(seen).toHaveLength(1);
    expect(await control.carbonBaseline()).toEqual({ c1: 200, c2: 100 });
    const first = (await control.getPlan())!;
    expect(first.policy).toBe("clover");

    providers.emValue = 209; // +4.5%, and the planner's 15-minute cadence is not due
    await refresh(providers, NOW + 300_000, seen);
    expect(seen).toHaveLength(1);
    expect((await control.cronRuns())["forecast-refresh"]?.[0]?.message).toContain("carbon trigger: no site moved more than 5%");

    providers.emValue = 189; // -5.5% from 200, the value at the last optimisation
    await refresh(providers, NOW + 600_000, seen);
    expect(seen).toHaveLength(2);
    expect(seen[1]!.sites.find((s) => s.id === "c1")?.carbonGPerKwh).toBe(189);
    const [last] = await control.carbonTriggers();
    expect(last).toMatchObject({ atMs: NOW + 600_000, policy: "clover", optimiser: "fake-planner-l", outcome: { status: "ok" } });
    expect(last!.moves).toEqual([{ site: "c1", fromGPerKwh: 200, toGPerKwh: 189, change: expect.closeTo(0.055, 9) }]);
    expect(await control.carbonBaseline()).toEqual({ c1: 189, c2: 100 });
    expect((await control.getPlan())!.version).toBe(first.version + 1);
  });

  it("keeps the baseline when the re-optimisation fails, so the next refresh tries again; policies without a trigger never fire", async () => {
    const control = await cloverFleet();
    const providers = new FakeProviders();
    const seen: PlanningInput[] = [];
    const before = await control.carbonBaseline();
    providers.emValue = 300;
    await refresh(providers, NOW + 900_000, seen, true);
    expect((await control.carbonTriggers())[0]?.outcome).toEqual({ status: "error", message: "fake-planner-l failed: solver blew up" });
    expect(await control.carbonBaseline()).toEqual(before);
    expect((await control.cronRuns())["forecast-refresh"]?.[0]).toMatchObject({ status: "ok" });

    await control.setFleet(sourcesFleet("heron", { c1: { kind: "electricitymaps", zone: "DE" } }));
    const triggers = (await control.carbonTriggers()).length;
    await refresh(providers, NOW + 1_200_000, seen);
    expect((await control.carbonTriggers()).length).toBe(triggers);
    expect((await control.cronRuns())["forecast-refresh"]?.[0]?.message).toContain("carbon trigger: not used by policy heron");
  });
});
