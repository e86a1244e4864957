import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import example from "../../docs/fleets/example.json";
import { controlStub } from "../../durable-objects/control-do.ts";
import { defaultCronDeps } from "../../functions/cron-deps.ts";
import { runPlannerLong } from "../../functions/planner-long.ts";
import { contractFleet, contractForecasts, contractProfile } from "../../src/core/policies/policy-contract.test-helper.ts";
import { DRAW_SETTLE_MS } from "../../src/core/policies/measured-draw.ts";
import { POLICIES } from "../../src/core/policies/registry.ts";
import type { PolicyKind } from "../../src/core/schemas/fleet.ts";
import type { Plan } from "../../src/core/schemas/plan.ts";

const offline = defaultCronDeps({ fetch: async () => new Response("offline", { status: 503 }) });
const WIND = "wind-north";

/** The contract fleet of a policy, planned by its fleet planner now (Planner-S reads power over the DO's own clock). */
async function planned(kind: PolicyKind): Promise<{ control: ReturnType<typeof controlStub>; plan: Plan; windW: number }> {
  const fleet = contractFleet(example, POLICIES[kind]);
  const nowMs = Date.now();
  const control = controlStub(env);
  await control.setFleet(fleet);
  await control.putProfile(contractProfile(fleet));
  const forecasts = contractForecasts(fleet, nowMs);
  await control.putForecasts(forecasts, nowMs);
  const windW = forecasts.find((f) => f.kind === "power_available" && f.subject.id === WIND)!.points[0]!.value;
  await windPower(control, windW); // newer than any an earlier test left
  await control.reportSiteStatus({ site: WIND as never, healthy: true, lastSeenMs: nowMs, saturated: [], unavailable: [], starting: [], reconfiguring: false });
  const run = await runPlannerLong(env, nowMs, offline, { force: true });
  expect(run.status, run.message).toBe("ok");
  const plan = (await control.getPlan())!;
  expect(plan).toMatchObject({ policy: kind, createdAtMs: nowMs });
  return { control, plan, windW };
}

/** The wind site's power forecast from now on. */
async function windPower(control: ReturnType<typeof controlStub>, watts: number): Promise<void> {
  const now = Date.now();
  const stored = await control.putForecasts({ kind: "power_available", unit: "W", source: "test", issuedAtMs: now, subject: { kind: "site", id: WIND }, points: [{ tMs: now - 1000, value: watts }, { tMs: now + 3_600_000, value: watts }] }, now);
  expect(stored.ok).toBe(true);
}

/** Runs ControlDO's alarm with the Planner-S timer due now (as if its period had passed). */
async function plannerSNow(control: ReturnType<typeof controlStub>): Promise<void> {
  await runInDurableObject(control, async (_instance, state) => {
    const timers = (await state.storage.get<Record<string, number>>("timers")) ?? {};
    expect(timers["planner-s"], "the Planner-S timer is set").toBeDefined();
    await state.storage.put("timers", { ...timers, "planner-s": Date.now() });
  });
  expect(await runDurableObjectAlarm(control)).toBe(true);
}

const sitesOf = (plan: Plan, site: string) => Object.values(plan.routing).flat().filter((t) => t.site === site);

/** The wind site's heartbeat through its SiteDO (which forwards its status, meter reading included, to ControlDO), sent at `atMs`. */
async function windDraw(watts: number, planVersion: number, atMs: number): Promise<void> {
  await env.SITE.get(env.SITE.idFromName(WIND)).heartbeat({ site: WIND, sentAtMs: atMs, appliedPlanVersion: planVersion, sitePowerW: watts, gpus: [], instances: [] });
}

/** Runs `step` with the Workers' clock (Date.now, in the test and the Durable Objects alike) at `atMs`. */
async function at<T>(atMs: number, step: () => Promise<T>): Promise<T> {
  vi.spyOn(Date, "now").mockReturnValue(atMs);
  try {
    return await step();
  } finally {
    vi.restoreAllMocks();
  }
}

describe("Planner-S on ControlDO's alarm", () => {
  it("Heron: corrects clocks and weights when a site's power drops mid-slot, as a revision that routing and the site's plan slice carry", async () => {
    const { control, plan } = await planned("heron");
    const wind = plan.sites.find((s) => s.site === WIND)!.instances;
    expect(wind.length).toBeGreaterThan(0);
    expect(sitesOf(plan, WIND).length).toBeGreaterThan(0);

    await plannerSNow(control); // power and demand as planned: nothing to correct
    expect(await control.correctionLog()).toEqual([]);
    expect((await control.getPlan())!.revision ?? 0).toBe(0);

    await windPower(control, 0);
    await plannerSNow(control);
    const [record] = await control.correctionLog();
    expect(record).toMatchObject({ planVersion: plan.version, revision: 1, corrector: "heron-planner-s + packing", reason: expect.stringContaining(`${WIND} power`) });
    const corrected = (await control.getPlan())!;
    expect(corrected).toMatchObject({ version: plan.version, revision: 1 });
    // No power: the wind site's entries idle at their lowest profiled clock, and what they served is short.
    const lowest = Math.min(...contractProfile(contractFleet(example, POLICIES.heron)).rows.filter((r) => r.gpu === "H100-80GB").map((r) => r.mhz));
    expect(corrected.sites.find((s) => s.site === WIND)!.instances.map((i) => i.clock)).toEqual(wind.map(() => ({ mode: "locked", mhz: lowest })));
    expect(record!.notes.join(" ")).toMatch(/short /);
    expect((await control.planSlice(WIND))!.revision).toBe(1);
    const reply = await control.routingSnapshot();
    expect(reply.changed && reply.snapshot.routing?.planRevision).toBe(1);
    expect((await control.planDelta())!.delta.baseVersion).toBe(plan.version);

    // The next step with nothing moved keeps revision 1; a new plan starts again from revision 0.
    await plannerSNow(control);
    expect((await control.getPlan())!.revision).toBe(1);
  });

  it("Heron: plans a site on what its meter reads, not only on the profile: a site drawing past its power is given less, and more again once its draw falls", async () => {
    const { control, plan, windW } = await planned("heron");
    const wind = plan.sites.find((s) => s.site === WIND)!.instances;
    const lowest = Math.min(...contractProfile(contractFleet(example, POLICIES.heron)).rows.filter((r) => r.gpu === "H100-80GB").map((r) => r.mhz));
    // Settled on the plan: the wind site's meter reads twice the power it has, far beyond what its plan models.
    const settled = plan.createdAtMs + DRAW_SETTLE_MS;
    await at(settled, async () => {
      await windDraw(2 * windW, plan.version, settled);
      await plannerSNow(control);
    });
    const [record] = await control.correctionLog();
    expect(record).toMatchObject({ planVersion: plan.version, revision: 1, reason: expect.stringContaining(`${WIND} power`) });
    expect(record!.notes.join(" ")).toContain(`site ${WIND}: its meter reads ${Math.round(2 * windW)} W`);
    // Planned on its power less all it draws beyond the model, nothing is left: its entries idle at their lowest clock.
    expect((await control.getPlan())!.sites.find((s) => s.site === WIND)!.instances.map((i) => i.clock)).toEqual(wind.map(() => ({ mode: "locked", mhz: lowest })));

    // Before the site is measured on the correction, Planner-S keeps what it took off.
    await at(settled + 1, () => plannerSNow(control));
    expect((await control.getPlan())!.revision).toBe(1);

    // Measured on it, the idle site draws little: its power comes back and its entries run again.
    const later = settled + 1 + DRAW_SETTLE_MS;
    await at(later, async () => {
      await windDraw(1_000, plan.version, later);
      await plannerSNow(control);
    });
    const [again] = await control.correctionLog();
    expect(again).toMatchObject({ revision: 2, reason: expect.stringContaining(`${WIND} power`) });
    expect(sitesOf((await control.getPlan())!, WIND).length).toBeGreaterThan(0);
  });

  it("leaves a site that is reconfiguring as it is", async () => {
    const { control, plan, windW } = await planned("heron");
    await windPower(control, 0);
    await control.reportSiteStatus({ site: WIND as never, healthy: true, lastSeenMs: Date.now(), saturated: [], unavailable: [], starting: [], reconfiguring: true });
    await plannerSNow(control);
    const [record] = await control.correctionLog();
    expect(record!.notes).toContain(`left as they are (reconfiguring): ${WIND}`);
    const corrected = (await control.getPlan())!;
    expect(corrected.revision).toBe(1);
    expect(corrected.sites.find((s) => s.site === WIND)!.instances.map((i) => i.clock)).toEqual(plan.sites.find((s) => s.site === WIND)!.instances.map((i) => i.clock));
    expect(sitesOf(corrected, WIND).length).toBeGreaterThan(0);
    expect(windW).toBeGreaterThan(0);
  });

  it("greenference: its own Planner-S lowers EcoFreq ceilings where power dropped, keeping the sites' per-iteration control", async () => {
    const { control, plan, windW } = await planned("greenference");
    const before = plan.sites.find((s) => s.site === WIND)!.instances;
    expect(before.length).toBeGreaterThan(0);
    await windPower(control, windW * 0.3);
    await plannerSNow(control);
    const [record] = await control.correctionLog();
    expect(record).toMatchObject({ corrector: "greenference planner-s (EcoFreq ceilings, weights)", revision: 1 });
    const after = (await control.getPlan())!.sites.find((s) => s.site === WIND)!.instances;
    const ceiling = (i: (typeof after)[number]) => (i.clock.mode === "policy" ? i.clock.maxMhz : NaN);
    expect(after.every((i) => i.clock.mode === "policy" && i.clock.policy === "ecofreq")).toBe(true);
    expect(after.some((i, k) => ceiling(i) < ceiling(before[k]!))).toBe(true);
    expect(after.every((i, k) => ceiling(i) <= ceiling(before[k]!))).toBe(true);
  });

  it("runs no Planner-S timer for a policy without a corrector", async () => {
    const { control } = await planned("freesh");
    const timers = await runInDurableObject(control, async (_i, state) => (await state.storage.get<Record<string, number>>("timers")) ?? {});
    expect(timers["planner-s"]).toBeUndefined();
  });
});
