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
