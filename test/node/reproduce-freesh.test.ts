import { describe, expect, it } from "vitest";
import { freeshReproduction } from "../../bench/reproduce/freesh.ts";
import { expectWellFormed, quickOptions, rowOf } from "./reproduce-seed.test-helper.ts";

describe("reproduce freesh (quick)", () => {
  it("compares the day with MinEnergy and the hour with Baseline and each ablation", async () => {
    const options = quickOptions();
    const result = await freeshReproduction.run(options);
    expectWellFormed({ ...result, rows: result.rows.filter((r) => r.seed === "freesh") }, "freesh", 15);
    // The combined policy's row: a ratio of its emissions to FREESH's, judged with both SLO attainments.
    const combined = result.rows.filter((r) => r.seed === "greenference");
    expect(combined).toHaveLength(1);
    expect(combined[0]).toMatchObject({ unit: "ratio", paper: 1, baseline: "FREESH" });
    expect(combined[0]!.ours).toBeGreaterThan(0);
    expect(combined[0]!.note).toMatch(/SLO attainment [\d.]+% vs [\d.]+%/);
    // The carbon plan is the carbon optimum: it never emits more than MinEnergy, nor uses less energy.
    expect(rowOf(result, "carbon vs MinEnergy (least-carbon tie)").ours).toBeLessThanOrEqual(1e-9);
    expect(rowOf(result, "carbon vs MinEnergy (solver's tie)").ours).toBeLessThanOrEqual(1e-9);
    expect(rowOf(result, "energy vs MinEnergy").ours).toBeGreaterThanOrEqual(-1e-9);
    // Same plan, same requests: MIAD's clocks save energy against the top clock.
    expect(rowOf(result, "energy w/o MIAD vs FREESH").ours).toBeGreaterThan(0);
    expect(result.inputs).toMatchObject({ dayEpisodes: 1, hour: { episodes: [24, 25], beta: 60 } });
    expect((result.inputs as { hour: { requests: number } }).hour.requests).toBeGreaterThan(1000);
    const hour = result.tables.find((t) => t.name === "freesh-hour")!.markdown;
    expect(hour).toContain("w/o TPchange");
    expect(hour).toContain("Greenference combined");
    // The Baseline has no work-mode knob: every worker is a type-blind TP4 instance.
    const planOf = (system: string) => hour.split("\n").find((l) => l.startsWith(`| ${system} `))!.split("|").at(-2)!;
    const workers = (plan: string) => [...plan.matchAll(/\d:all:(?:A100|H100)x4 x(\d+)/g)].reduce((n, m) => n + Number(m[1]), 0);
    for (const system of ["Baseline", "Baseline, hour's peak"]) {
      expect(workers(planOf(system))).toBeGreaterThan(0);
      expect(planOf(system)).not.toMatch(/x2 x|x8 x/);
    }
    // Reserved for the day's peak, the Baseline holds at least the pool the hour's peak needs.
    expect(workers(planOf("Baseline"))).toBeGreaterThanOrEqual(workers(planOf("Baseline, hour's peak")));
    expect(options.messages.some((m) => m.includes("serving the hour, Baseline"))).toBe(true);
  });

  it("fails with a message that names a missing data folder", async () => {
    await expect(freeshReproduction.run(quickOptions({ dataDir: "/nonexistent/data" }))).rejects.toThrow(/cannot read \/nonexistent\/data\//);
  });
});
