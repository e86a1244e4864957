import { describe, expect, it } from "vitest";
import { runCli } from "../run-command.test-helper.ts";

describe("greenference calibrate", () => {
  it("prints every calibration figure as the last JSON line", async () => {
    const r = await runCli(["calibrate", "--data", "data", "--requests", "120", "--json"]);
    expect(r.code).toBe(0);
    const j = r.last();
    expect(j.simulated).toBe(true);
    for (const k of ["prompt_ape_p50", "prompt_ape_p90", "token_ape_p50", "token_ape_p90"]) expect(j.splitwise[k]).toBeGreaterThan(0);
    expect(j.a100_8b.sweet_spot_mhz).toBeGreaterThan(0);
    expect(j.dynamollm_table1.classes).toHaveLength(9);
    expect(j.dynamollm_table1.matches).toBe(j.dynamollm_table1.classes.filter((c: { match: boolean }) => c.match).length);
    expect(j.dynamollm_table1.feasible_cells).toBe(108);
    for (const scheduling of ["prefill_first", "chunked"]) {
      const kinds = j.freesh_vllm[scheduling];
      expect(Object.keys(kinds).sort()).toEqual(["a100", "h100"]);
      for (const k of Object.values<{ points: number; keeps_up: number; tbt_ratio_p50: number }>(kinds)) {
        expect(k.keeps_up).toBeLessThanOrEqual(k.points);
        expect(k.tbt_ratio_p50).toBeGreaterThan(0);
      }
    }
    expect(j.dynamollm_table1.feasible_agreement).toBe(j.dynamollm_table1.classes.reduce((n: number, c: { feasible_agreement: number }) => n + c.feasible_agreement, 0));
  });

  it("names the missing file when --data points nowhere", async () => {
    const r = await runCli(["calibrate", "--data", "/nonexistent"]);
    expect(r.code).toBe(1);
    expect(r.err.join("\n")).toContain("/nonexistent/splitwise/perf_model.csv");
  });
});
