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
  });

  it("refuses to run without --bench", async () => {
    const r = await runCli(["plan"]);
    expect(r.code).toBe(1);
  });
});

describe("greenference plan --fleet", () => {
  it("prints a valid plan from a registered policy for the example fleet file", async () => {
    const { Plan } = await import("../../src/core/schemas/plan.ts");
    const r = await runCli(["plan", "--fleet", "docs/fleets/example.json", "--policy", "heron-planner-l", "--demand", "SS=2,MM=1,LL=0.5", "--json"]);
    expect(r.err).toEqual([]);
    expect(r.code).toBe(0);
    const out = r.last();
    const plan = Plan.parse(out.plan);
    expect(out.policy).toBe("heron-planner-l");
    expect(Object.keys(plan.routing).sort()).toEqual(["LL", "MM", "SS"]);
    expect(plan.shortfall).toEqual({});
  }, 60_000);

  it("names the offending field of an invalid fleet file, and refuses an unknown policy", async () => {
    const bad = await runCli(["plan", "--fleet", "package.json", "--policy", "heron-planner-l"]);
    expect(bad.code).toBe(1);
    expect(bad.err.join("\n")).toMatch(/package\.json: sites: /);
    const unknown = await runCli(["plan", "--fleet", "docs/fleets/example.json", "--policy", "nope"]);
    expect(unknown.code).toBe(1);
    expect(unknown.err.join("\n")).toContain("--policy must be one of");
  });
});
