import { describe, expect, it } from "vitest";
import type { ClassId } from "../schemas/ids.ts";
import { Router, type RouteQuery, type RouteResult } from "./router.ts";
import { Plan } from "../schemas/plan.ts";
import { fixturePlan, fixtureSnapshot, NOW, status } from "./routing.test-helper.ts";

const OPTIONS = { staleAfterMs: 10_000 };
const FROM_AMS = ["AMS", "EU"];
const FROM_NA = ["NA"];

function query(classId: string, over: Partial<RouteQuery> = {}): RouteQuery {
  return { classId: classId as ClassId, model: "m", edgeRegions: FROM_NA, nowMs: NOW, ...over };
}

function sitesOf(router: Router, n: number, q: RouteQuery): string[] {
  return Array.from({ length: n }, () => {
    const r = router.select(q);
    return r.ok ? r.choice.site : `error: ${r.reason}`;
  });
}

function count(xs: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const x of xs) out[x] = (out[x] ?? 0) + 1;
  return out;
}

function choice(r: RouteResult) {
  if (!r.ok) throw new Error(r.reason);
  return r.choice;
}

describe("Router shares", () => {
  it("matches the plan's weights exactly over each cycle", () => {
    const router = new Router(fixtureSnapshot(), OPTIONS);
    for (let cycle = 0; cycle < 4; cycle++) expect(count(sitesOf(router, 5, query("SS")))).toEqual({ a: 3, b: 1, c: 1 });
  });

  it("keeps a class and a model to their own targets", () => {
    const router = new Router(fixtureSnapshot(), OPTIONS);
    expect(choice(router.select(query("SL")))).toMatchObject({ site: "a", instance: "i1", pool: "SL", overflow: false });
    expect(choice(router.select(query("LS", { model: "other" })))).toMatchObject({ site: "a", instance: "o0" });
    // A class the plan routes nowhere is served on an instance of its model all the same.
    expect(choice(router.select(query("LL", { model: "other" })))).toMatchObject({ site: "a", instance: "o0", failover: true });
    expect(router.select(query("LL", { model: "unplanned" }))).toEqual({ ok: false, reason: 'no instance in plan 1 serves class LL of model "unplanned"' });
  });
});

describe("Router skipping", () => {
  it("leaves out sites whose RTT from the edge region breaks the class's TTFT SLO", () => {
    const router = new Router(fixtureSnapshot(), OPTIONS);
    expect(count(sitesOf(router, 8, query("SS", { edgeRegions: FROM_AMS })))).toEqual({ a: 6, b: 2 });
    // A region the fleet has no figure for excludes nothing.
    expect(count(sitesOf(router, 5, query("SS", { edgeRegions: ["SYD", "OC"] })))).toEqual({ a: 3, b: 1, c: 1 });
  });

  it("skips unhealthy, stale, never-seen sites and instances that are not ready", () => {
    const snapshots = [
      fixtureSnapshot([status("a", { healthy: false })]),
      fixtureSnapshot([status("a", { lastSeenMs: NOW - OPTIONS.staleAfterMs - 1 })]),
      fixtureSnapshot([status("a", { lastSeenMs: null })]),
      fixtureSnapshot([status("a", { unavailable: ["i0" as never] })]),
    ];
    for (const s of snapshots) expect(count(sitesOf(new Router(s, OPTIONS), 4, query("SS")))).toEqual({ b: 2, c: 2 });
    const noStatus = fixtureSnapshot();
    noStatus.sites["a" as never]!.status = null;
    expect(count(sitesOf(new Router(noStatus, OPTIONS), 2, query("SS")))).toEqual({ b: 1, c: 1 });
  });

  it("says why when nothing is left, counting the overflow pools' targets too", () => {
    const router = new Router(fixtureSnapshot([status("a", { healthy: false }), status("b", { healthy: false })]), OPTIONS);
    expect(router.select(query("SS", { edgeRegions: FROM_AMS }))).toEqual({
      ok: false,
      reason: 'no available instance for class SS of model "m": 4 at unhealthy or stale sites, 1 beyond the 200 ms TTFT SLO from AMS',
    });
    expect(router.select(query("XX")).ok).toBe(false);
  });
});

describe("Router overflow", () => {
  it("stays in the pool while one instance has room", () => {
    const router = new Router(fixtureSnapshot([status("a", { saturated: ["i0" as never] })]), OPTIONS);
    expect(count(sitesOf(router, 2, query("SS", { edgeRegions: FROM_AMS })))).toEqual({ b: 2 });
  });

  it("overflows to the next larger pool when the pool is saturated, then to the one after", () => {
    const full = fixtureSnapshot([status("a", { saturated: ["i0" as never] }), status("b", { saturated: ["i0" as never] })]);
    const q = query("SS", { edgeRegions: FROM_AMS });
    expect(choice(new Router(full, OPTIONS).select(q))).toMatchObject({ site: "a", instance: "i1", pool: "SL", overflow: true, saturated: false });
    const fuller = fixtureSnapshot([status("a", { saturated: ["i0", "i1"] as never[] }), status("b", { saturated: ["i0" as never] })]);
    expect(choice(new Router(fuller, OPTIONS).select(q))).toMatchObject({ site: "b", instance: "i1", pool: "LL", overflow: true });
  });

  it("queues in its own pool when every pool is saturated", () => {
    const all = fixtureSnapshot([status("a", { saturated: ["i0", "i1"] as never[] }), status("b", { saturated: ["i0", "i1"] as never[] })]);
    const router = new Router(all, OPTIONS);
    const picks = Array.from({ length: 4 }, () => choice(router.select(query("SS", { edgeRegions: FROM_AMS }))));
    expect(picks.map((p) => p.site)).toEqual(["a", "a", "b", "a"]);
    expect(picks.every((p) => p.pool === "SS" && p.saturated)).toBe(true);
  });

  it("never queues work that can wait (spareOnly): spare instances, overflow included, or no route", () => {
    const full = fixtureSnapshot([status("a", { saturated: ["i0" as never] }), status("b", { saturated: ["i0" as never] })]);
    expect(choice(new Router(full, OPTIONS).select(query("SS", { edgeRegions: FROM_AMS, spareOnly: true })))).toMatchObject({ site: "a", instance: "i1", saturated: false });
    const all = fixtureSnapshot([status("a", { saturated: ["i0", "i1"] as never[] }), status("b", { saturated: ["i0", "i1"] as never[] })]);
    expect(new Router(all, OPTIONS).select(query("SS", { edgeRegions: FROM_AMS, spareOnly: true }))).toEqual({ ok: false, reason: "no site has spare capacity for class SS" });
  });
});

describe("Router during a plan change", () => {
  it("sends to an instance that is still starting only when none is ready or saturated, and says so", () => {
    // LL's only target, b/i1, is starting: its site serves the request on what already runs there.
    const starting = fixtureSnapshot([status("b", { unavailable: ["i1" as never], starting: ["i1" as never] })]);
    expect(choice(new Router(starting, OPTIONS).select(query("LL")))).toMatchObject({ site: "b", instance: "i1", starting: true, saturated: false });
    // SS has ready targets elsewhere: a starting one is skipped.
    const someReady = fixtureSnapshot([status("a", { unavailable: ["i0" as never], starting: ["i0" as never] })]);
    expect(count(sitesOf(new Router(someReady, OPTIONS), 4, query("SS")))).toEqual({ b: 2, c: 2 });
    // A draining (unavailable, not starting) instance is never chosen: the request fails over to a ready instance of its model.
    const draining = fixtureSnapshot([status("b", { unavailable: ["i1" as never] })]);
    expect(choice(new Router(draining, OPTIONS).select(query("LL")))).toMatchObject({ site: "a", instance: "i0", failover: true });
    const allDraining = fixtureSnapshot(["a", "b", "c"].map((s) => status(s, { unavailable: ["i0", "i1"] as never[] })));
    expect(new Router(allDraining, OPTIONS).select(query("LL"))).toEqual({ ok: false, reason: 'no available instance for class LL of model "m": 5 not ready' });
  });

  it("gives a starting instance its share while its site covers it with the engines it replaces", () => {
    const covered = fixtureSnapshot([status("a", { unavailable: ["i0" as never], starting: ["i0" as never], covered: ["i0" as never] })]);
    expect(count(sitesOf(new Router(covered, OPTIONS), 5, query("SS")))).toEqual({ a: 3, b: 1, c: 1 });
    expect(choice(new Router(covered, OPTIONS).select(query("SS")))).toMatchObject({ site: "a", instance: "i0", starting: false, saturated: false });
    // Covered, but the engines standing in are full: like any saturated instance.
    const full = fixtureSnapshot([status("a", { unavailable: ["i0" as never], starting: ["i0" as never], covered: ["i0" as never], saturated: ["i0" as never] })]);
    expect(count(sitesOf(new Router(full, OPTIONS), 4, query("SS")))).toEqual({ b: 2, c: 2 });
  });
});

describe("Router before a site has applied the plan", () => {
  const ids = (...xs: string[]) => xs as never[];

  it("passes over an instance its site does not run while another target of the class is ready", () => {
    // Site a runs i1 and o0 but not yet the plan's i0 (it reports what it runs).
    const behind = fixtureSnapshot([status("a", { ready: ids("i1", "o0") })]);
    expect(count(sitesOf(new Router(behind, OPTIONS), 4, query("SS")))).toEqual({ b: 2, c: 2 });
  });

  it("fails over to a ready instance of the model before it sends to one its site does not run", () => {
    // LL's only target, b/i1, is not run at b yet: a ready instance of the model elsewhere takes it.
    const behind = fixtureSnapshot([status("b", { ready: ids("i0") })]);
    expect(choice(new Router(behind, OPTIONS).select(query("LL")))).toMatchObject({ site: "a", instance: "i0", failover: true, starting: false });
  });

  it("sends by the plan's weights to instances no site runs yet when none is ready, marked as starting", () => {
    // Every site still runs only the plan before's engines ("old"): their gateways stand in with them.
    const allBehind = fixtureSnapshot(["a", "b", "c"].map((s) => status(s, { ready: ids("old") })));
    const router = new Router(allBehind, OPTIONS);
    expect(count(sitesOf(router, 5, query("SS")))).toEqual({ a: 3, b: 1, c: 1 });
    expect(choice(router.select(query("SS")))).toMatchObject({ starting: true, failover: false });
  });

  it("still tries a site that reports nothing ready when nothing else can take the request", () => {
    // A site just up again: its heartbeat has not yet told routing of the engines it now runs.
    const justUp = fixtureSnapshot([status("b", { ready: [] })]);
    expect(choice(new Router(justUp, OPTIONS).select(query("LL")))).toMatchObject({ site: "a", failover: true });
    const allJustUp = fixtureSnapshot(["a", "b", "c"].map((s) => status(s, { ready: [] })));
    expect(choice(new Router(allJustUp, OPTIONS).select(query("LL")))).toMatchObject({ site: "b", instance: "i1", starting: true });
  });
});

describe("Router failover to a standby or another instance of the model", () => {
  /** The fixture plan with a standby of model "other" (served only at a/o0) at b. */
  function withStandbyPlan(): Plan {
    const plan = fixturePlan();
    return Plan.parse({
      ...plan,
      sites: plan.sites.map((s) => (s.site === "b" ? { ...s, instances: [...s.instances, { id: "os", model: "other", variant: "base", tp: 1, gpus: [2], clock: { mode: "locked", mhz: 1410 } }] } : s)),
      standby: [{ model: "other", site: "b", instance: "os", idlePowerW: 136.5, gco2ePerHour: 13.7 }],
    });
  }
  const other = (over: Partial<RouteQuery> = {}) => query("LS", { model: "other", edgeRegions: FROM_AMS, ...over });
  const snapshot = (statuses: Parameters<typeof fixtureSnapshot>[0] = [], generation = 1) => fixtureSnapshot(statuses, generation, withStandbyPlan());

  it("sends nothing to the standby while an instance the plan routes to can take the request, saturated or not", () => {
    expect(choice(new Router(snapshot(), OPTIONS).select(other()))).toMatchObject({ site: "a", instance: "o0", failover: false });
    expect(choice(new Router(snapshot([status("a", { saturated: ["o0" as never] })]), OPTIONS).select(other()))).toMatchObject({ site: "a", saturated: true, failover: false });
  });

  it("fails over to the standby when the plan's sites are down or already failed the request, and back when they return", () => {
    const router = new Router(snapshot([status("a", { healthy: false })]), OPTIONS);
    expect(choice(router.select(other()))).toMatchObject({ site: "b", instance: "os", pool: "LS", failover: true, saturated: false });
    router.update(snapshot([], 2));
    expect(choice(router.select(other()))).toMatchObject({ site: "a", instance: "o0", failover: false });
    expect(choice(router.select(other({ excludeSites: new Set(["a"]) })))).toMatchObject({ site: "b", instance: "os", failover: true });
  });

  it("goes to the standby before the instances the plan routes other classes to", () => {
    // SL's only target is a/i1 and its overflow LL's is b/i1; with a and b down, m's standby at c comes before c's SS instance.
    const plan = fixturePlan();
    const standbyAtC = Plan.parse({ ...plan, sites: plan.sites.map((s) => (s.site === "c" ? { ...s, instances: [...s.instances, { id: "ms", model: "m", variant: "base", tp: 1, gpus: [3], clock: { mode: "locked", mhz: 1410 } }] } : s)), standby: [{ model: "m", site: "c", instance: "ms", idlePowerW: 1, gco2ePerHour: null }] });
    const down = (sb: boolean) => new Router(fixtureSnapshot([status("a", { healthy: false }), status("b", { healthy: false })], 1, sb ? standbyAtC : plan), OPTIONS);
    expect(choice(down(true).select(query("SL")))).toMatchObject({ site: "c", instance: "ms", failover: true });
    expect(choice(down(false).select(query("SL")))).toMatchObject({ site: "c", instance: "i0", failover: true });
    // With only a down, SL overflows to LL's b/i1 (a larger pool of its own plan) before failing over.
    expect(choice(new Router(fixtureSnapshot([status("a", { healthy: false })], 1, standbyAtC), OPTIONS).select(query("SL")))).toMatchObject({ site: "b", instance: "i1", overflow: true, failover: false });
  });

  it("keeps work that can wait off the standby, and counts the standby when nothing is left", () => {
    const down = new Router(snapshot([status("a", { healthy: false })]), OPTIONS);
    expect(down.select(other({ spareOnly: true }))).toEqual({ ok: false, reason: "no site has spare capacity for class LS" });
    const both = new Router(snapshot([status("a", { healthy: false }), status("b", { healthy: false })]), OPTIONS);
    expect(both.select(other())).toEqual({ ok: false, reason: 'no available instance for class LS of model "other": 2 at unhealthy or stale sites' });
  });
});

describe("Router retry and snapshot updates", () => {
  it("retries at the next choice when the first site failed", () => {
    const router = new Router(fixtureSnapshot(), OPTIONS);
    const first = choice(router.select(query("SS")));
    expect(first.site).toBe("a");
    const retry = choice(router.select(query("SS", { excludeSites: new Set([first.site]) })));
    expect(retry.site).not.toBe("a");
    // LL's only site failed it: it fails over to another instance of its model, and says why when every site did.
    expect(choice(router.select(query("LL", { excludeSites: new Set(["b"]) })))).toMatchObject({ site: "a", failover: true });
    expect(router.select(query("LL", { excludeSites: new Set(["a", "b", "c"]) }))).toMatchObject({ ok: false, reason: expect.stringContaining("5 at sites that already failed") });
  });

  it("keeps round-robin state across health updates of the same plan and restarts it for a new plan", () => {
    const router = new Router(fixtureSnapshot(), OPTIONS);
    expect(sitesOf(router, 2, query("SS"))).toEqual(["a", "b"]);
    router.update(fixtureSnapshot([], 2));
    expect(sitesOf(router, 3, query("SS"))).toEqual(["a", "c", "a"]);
    router.update(fixtureSnapshot([], 3, fixturePlan(2)));
    expect(sitesOf(router, 2, query("SS"))).toEqual(["a", "b"]);
  });

  it("sees a health update of the same plan at the next request, in every pool it has built", () => {
    const router = new Router(fixtureSnapshot(), OPTIONS);
    expect(count(sitesOf(router, 5, query("SS")))).toEqual({ a: 3, b: 1, c: 1 });
    expect(choice(router.select(query("SL"))).site).toBe("a");
    router.update(fixtureSnapshot([status("a", { healthy: false })], 2));
    expect(count(sitesOf(router, 4, query("SS")))).toEqual({ b: 2, c: 2 });
    expect(router.select(query("SL"))).toMatchObject({ ok: true, choice: { pool: "LL", overflow: true } });
    router.update(fixtureSnapshot([], 3));
    expect(sitesOf(router, 5, query("SS"))).toContain("a");
  });
});
