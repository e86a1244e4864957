import { describe, expect, it } from "vitest";
import { runCli } from "../../cli/run-command.test-helper.ts";

describe("greenference bench batch", () => {
  it("runs a short simulated stretch and ends stdout with the figures, no deadline missed and the schedule no dirtier than at submission", async () => {
    // A volume the quick stretch's spare capacity holds (the optimum has nothing late), so every deadline can be kept.
    const r = await runCli(["bench", "batch", "--quick", "--seed", "2", "--batch-volume", "0.02", "--json"]);
    expect(r.code).toBe(0);
    expect(r.out).toHaveLength(1);
    const out = r.last();
    expect(Object.keys(out)).toEqual(expect.arrayContaining(["batch_requests", "deadline_misses", "carbon_g", "scheduled_vs_submission", "gap_to_optimum", "interactive_slo_attainment"]));
    expect(out.batch_requests).toBeGreaterThan(0);
    expect(out.placements.offline_optimum.late_requests).toBe(0);
    expect(out.deadline_misses).toBe(0);
    const { at_submission, scheduled, offline_optimum } = out.carbon_g;
    expect(at_submission).toBeGreaterThan(0);
    expect(scheduled).toBeLessThanOrEqual(at_submission);
    // The optimum is fluid (fractions of requests), the schedule whole requests: it can only be as good or better.
    expect(offline_optimum).toBeLessThanOrEqual(scheduled * (1 + 1e-6));
    expect(out.scheduled_vs_submission).toBeCloseTo(scheduled / at_submission, 2);
    expect(out.gap_to_optimum).toBeGreaterThanOrEqual(-1e-6);
    const slo = out.interactive_slo_attainment;
    for (const x of [slo.without_batch, slo.with_batch]) expect(x).toBeGreaterThan(0);
    for (const x of [slo.without_batch, slo.with_batch]) expect(x).toBeLessThanOrEqual(1);
    expect(out.inputs).toMatchObject({ simulated: true, seed: 2, hours: 2, window_hours: 1 });
    // Every batch request the schedule started reached the simulator beside the interactive load.
    expect(out.simulated.batch.arrived).toBeGreaterThan(0);
    expect(r.err.join("\n")).toMatch(/scheduled \(online, re-planned each slot\)/);
  });

  it("names a bad flag's value and exits 1", async () => {
    const r = await runCli(["bench", "batch", "--quick", "--forecast", "oracle"]);
    expect(r.code).toBe(1);
    expect(r.err.join("\n")).toMatch(/--forecast must be stack, persistence or perfect/);
  });
});
