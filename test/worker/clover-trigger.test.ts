import { createScheduledController, env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { controlStub } from "../../durable-objects/control-do.ts";
import { CLOVER_OPTIMISER, type CarbonOptimiserContext } from "../../functions/planner-registry.ts";
import { runScheduled } from "../../functions/schedules.ts";
import { FakeProviders, NOW, providerEnv, sourcesFleet } from "./forecast-fixture.ts";

async function refresh(providers: FakeProviders, t: number, optimiser: { calls: CarbonOptimiserContext[]; fail?: boolean }): Promise<void> {
  const deps = providers.deps({
    carbonOptimisers: (policy) =>
      policy === "clover"
        ? {
            name: CLOVER_OPTIMISER,
            run: async (ctx) => {
              optimiser.calls.push(ctx);
              if (optimiser.fail) throw new Error("annealing diverged");
              return { status: "ok", message: "re-optimised" };
            },
          }
        : null,
  });
  await runScheduled(createScheduledController({ scheduledTime: t, cron: "*/5 * * * *" }), providerEnv, deps);
}

describe("Clover's carbon trigger", () => {
  it("re-optimises on a move of more than 5% from the value at the last optimisation, and logs it", async () => {
    const control = controlStub(env);
    await control.setFleet(sourcesFleet("clover", { c1: { kind: "electricitymaps", zone: "DE" }, c2: { kind: "fixed", gPerKwh: 100 } }));
    const providers = new FakeProviders();
    const optimiser: { calls: CarbonOptimiserContext[]; fail?: boolean } = { calls: [] };

    providers.emValue = 200;
    await refresh(providers, NOW, optimiser); // no baseline yet: the first optimisation
    expect(optimiser.calls).toHaveLength(1);
    expect(await control.carbonBaseline()).toEqual({ c1: 200, c2: 100 });

    providers.emValue = 209; // +4.5%
    await refresh(providers, NOW + 300_000, optimiser);
    expect(optimiser.calls).toHaveLength(1);
    expect((await control.cronRuns())["forecast-refresh"]?.[0]?.message).toContain("carbon trigger: no site moved more than 5%");

    providers.emValue = 189; // -5.5% from 200, the value at the last optimisation
    await refresh(providers, NOW + 600_000, optimiser);
    expect(optimiser.calls).toHaveLength(2);
    expect(optimiser.calls[1]!.decision.moves).toEqual([{ site: "c1", fromGPerKwh: 200, toGPerKwh: 189, change: expect.closeTo(0.055, 9) }]);
    const [last] = await control.carbonTriggers();
    expect(last).toMatchObject({ atMs: NOW + 600_000, policy: "clover", optimiser: CLOVER_OPTIMISER, outcome: { status: "ok" } });
    expect(await control.carbonBaseline()).toEqual({ c1: 189, c2: 100 });
  });

  it("keeps the baseline when the optimiser fails, so the next refresh tries again; other policies never fire", async () => {
    const control = controlStub(env);
    await control.setFleet(sourcesFleet("clover", { c1: { kind: "electricitymaps", zone: "DE" }, c2: { kind: "fixed", gPerKwh: 100 } }));
    const providers = new FakeProviders();
    const optimiser = { calls: [] as CarbonOptimiserContext[], fail: true };
    const before = await control.carbonBaseline();
    providers.emValue = 300;
    await refresh(providers, NOW + 900_000, optimiser);
    expect((await control.carbonTriggers())[0]?.outcome).toEqual({ status: "error", message: "annealing diverged" });
    expect(await control.carbonBaseline()).toEqual(before);
    expect((await control.cronRuns())["forecast-refresh"]?.[0]).toMatchObject({ status: "ok" });

    await control.setFleet(sourcesFleet("heron", { c1: { kind: "electricitymaps", zone: "DE" } }));
    await refresh(providers, NOW + 1_200_000, optimiser);
    expect(optimiser.calls).toHaveLength(1);
    expect((await control.cronRuns())["forecast-refresh"]?.[0]?.message).toContain("carbon trigger: not used by policy heron");
  });
});
