import { describe, expect, it } from "vitest";
import { runCli } from "../run-command.test-helper.ts";

describe("greenference plan --bench", () => {
  it("reports size, solve time and the gap to the LP bound for each fleet size", async () => {
    const r = await runCli(["plan", "--bench", "--sites", "2", "--json"]);
    expect(r.code).toBe(0);
    const [row] = r.last().sizes;
    expect(row).toMatchObject({ sites: 2, classes: 9 });
    expect(row.variables).toBeGreaterThan(0);
    expect(row.objective).toBeGreaterThanOrEqual(row.lp_bound * (1 - 1e-9));
    expect(row.gap).toBeGreaterThanOrEqual(0);
    expect(row.planner_s_ms).toBeGreaterThan(0);
    // The cold first solve (JIT, solver start-up) is reported apart from the rows.
    expect(r.last().first_solve_ms).toBeGreaterThan(0);
  }, 300_000);

  it("refuses to run without --bench", async () => {
    const r = await runCli(["plan"]);
    expect(r.code).toBe(1);
  });

  it("--in-worker plans inside workerd on the Worker's HiGHS, and makes the plan HiGHS makes on Node", async () => {
    const worker = await runCli(["plan", "--bench", "--in-worker", "--sites", "2", "--json"]);
    expect(worker.err).toEqual([]);
    expect(worker.code).toBe(0);
    const node = await runCli(["plan", "--bench", "--sites", "2", "--json"]);
    const [inWorker] = worker.last().sizes;
    const [onNode] = node.last().sizes;
    expect(worker.last()).toMatchObject({ runtime: "workerd", solver: "highs" });
    expect(inWorker).toMatchObject({ sites: 2, variables: onNode.variables, objective: onNode.objective, lp_bound: onNode.lp_bound, planner_s_gap: onNode.planner_s_gap });
    expect(inWorker.solve_ms).toBeGreaterThan(0);
    expect(inWorker.planner_s_ms).toBeGreaterThan(0);
  }, 300_000);

  it("--in-worker goes with --bench and HiGHS's Worker module", async () => {
    expect((await runCli(["plan", "--in-worker"])).code).toBe(1);
    const jslp = await runCli(["plan", "--bench", "--in-worker", "--solver", "jslp"]);
    expect(jslp.code).toBe(1);
    expect(jslp.err.join("\n")).toContain("--in-worker solves with HiGHS's WebAssembly as a Worker module");
  });
});

describe("greenference plan --fleet", () => {
  it("exits 1 with the planner's reason on stderr and as the JSON line when the policy's planner cannot plan the fleet", async () => {
    // Clover serves a model on whole single GPUs; the example fleet's llama2-70b fits none.
    for (const json of [[], ["--json"]]) {
      const r = await runCli(["plan", "--fleet", "docs/fleets/example.json", "--policy", "clover", ...json]);
      expect(r.code).toBe(1);
      const why = /^this fleet cannot be planned under policy clover: clover cannot serve llama2-70b on this fleet: no variant of it \(base\) fits a whole /;
      expect(r.err).toEqual([expect.stringMatching(/^greenference plan: this fleet cannot be planned under policy clover: /)]);
      expect(r.out).toHaveLength(1);
      expect(r.last()).toEqual({ ok: false, policy: "clover", error: expect.stringMatching(why) });
    }
  }, 60_000);

  it("prints a valid plan from a registered policy for the example fleet file", async () => {
    const { Plan } = await import("../../src/core/schemas/plan.ts");
    const r = await runCli(["plan", "--fleet", "docs/fleets/example.json", "--policy", "heron-planner-l", "--demand", "SS=2,MM=1,LL=0.5", "--json"]);
    expect(r.err).toEqual([]);
    expect(r.code).toBe(0);
    const out = r.last();
    const plan = Plan.parse(out.plan);
    expect(out.policy).toBe("heron-planner-l");
    expect(out.plan_cpu_ms).toBeGreaterThan(0);
    expect(out.plan_ms).toBeGreaterThan(0);
    expect(Object.keys(plan.routing).sort()).toEqual(["LL", "MM", "SS"]);
    expect(plan.shortfall).toEqual({});
  }, 60_000);

  it("plans a wind site on its power forecast, and at 0 W with a note without one, as the edge's planner cron does", async () => {
    const { Plan } = await import("../../src/core/schemas/plan.ts");
    const args = ["plan", "--fleet", "docs/fleets/example.json", "--policy", "heron-planner-l", "--demand", "SS=2,MM=1", "--json"];
    const forecast = await runCli([...args, "--forecasts", "docs/fleets/example-forecasts.json"]);
    expect(forecast.err).toEqual([]);
    const powered = Plan.parse(forecast.last().plan);
    // The forecast's 0.45 MW, not a share of the farm's 4 MW peak.
    expect(powered.sites.find((s) => s.site === "wind-north")?.powerCapW).toBe(450_000);
    expect(powered.sites.find((s) => s.site === "wind-north")?.instances.length).toBeGreaterThan(0);
    expect(powered.notes.filter((n) => n.includes("no power forecast"))).toEqual([]);

    const unforecast = await runCli(args);
    expect(unforecast.code).toBe(0);
    const dark = Plan.parse(unforecast.last().plan);
    expect(dark.sites.find((s) => s.site === "wind-north")?.instances ?? []).toEqual([]);
    expect(dark.notes).toContain("site wind-north: no power forecast for its wind farm, planned at 0 W");
    expect(dark.shortfall).toEqual({});
  }, 60_000);

  it("plans the example fleet with the combined policy: EcoFreq bounds, and the load on the site --carbon says is cleaner", async () => {
    const { Plan } = await import("../../src/core/schemas/plan.ts");
    // Without --carbon the wind site counts at its life-cycle 11 gCO2/kWh and the grid site conservatively.
    const r = await runCli(["plan", "--fleet", "docs/fleets/example.json", "--forecasts", "docs/fleets/example-forecasts.json", "--policy", "greenference", "--demand", "SS=2,MM=1", "--carbon", "wind-north=2000,grid-west=5", "--json"]);
    expect(r.err).toEqual([]);
    expect(r.code).toBe(0);
    const plan = Plan.parse(r.last().plan);
    expect(plan.policy).toBe("greenference");
    expect(plan.shortfall).toEqual({});
    const served = (site: string) => Object.values(plan.routing).flat().filter((t) => t.site === site).reduce((s, t) => s + t.weight, 0);
    expect(served("grid-west")).toBeCloseTo(3, 6);
    expect(plan.sites.flatMap((s) => s.instances).every((e) => e.clock.mode === "policy" && e.clock.policy === "ecofreq")).toBe(true);
    const bad = await runCli(["plan", "--fleet", "docs/fleets/example.json", "--policy", "greenference", "--carbon", "grid-west"]);
    expect(bad.code).toBe(1);
    expect(bad.err.join("\n")).toContain("--carbon takes SITE=GCO2_PER_KWH pairs");
    const stranger = await runCli(["plan", "--fleet", "docs/fleets/example.json", "--policy", "greenference", "--carbon", "elsewhere=5"]);
    expect(stranger.code).toBe(1);
    expect(stranger.err.join("\n")).toContain("--carbon names sites the fleet does not have: elsewhere");
  }, 60_000);

  it("names the offending field of an invalid fleet file, and refuses an unknown policy", async () => {
    const bad = await runCli(["plan", "--fleet", "package.json", "--policy", "heron-planner-l"]);
    expect(bad.code).toBe(1);
    expect(bad.err.join("\n")).toMatch(/package\.json: sites: /);
    const unknown = await runCli(["plan", "--fleet", "docs/fleets/example.json", "--policy", "nope"]);
    expect(unknown.code).toBe(1);
    expect(unknown.err.join("\n")).toContain("--policy must be one of");
  });

  it("refuses an --rps that is no positive number and a --demand for a class the fleet lacks, naming the flag", async () => {
    for (const rps of ["abc", "-5", "0", "Infinity"]) {
      const r = await runCli(["plan", "--fleet", "docs/fleets/example.json", "--policy", "heron", `--rps=${rps}`]);
      expect(r.code).toBe(1);
      expect(r.err.join("\n")).toContain(`--rps takes a positive number of requests per second, got '${rps}'`);
    }
    const unknownClass = await runCli(["plan", "--fleet", "docs/fleets/example.json", "--policy", "heron", "--demand", "XX=3"]);
    expect(unknownClass.err.join("\n")).toMatch(/--demand: docs\/fleets\/example.json has no class "XX"/);
  });
});
