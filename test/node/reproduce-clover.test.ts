import { describe, expect, it } from "vitest";
import { cloverReproduction } from "../../bench/reproduce/clover.ts";
import { expectWellFormed, quickOptions, rowOf } from "./reproduce-seed.test-helper.ts";

describe("reproduce clover (quick)", () => {
  it("runs BASE, CO2OPT, BLOVER, CLOVER and ORACLE over the carbon trace", async () => {
    const result = await cloverReproduction.run(quickOptions());
    expectWellFormed(result, "clover", 6);
    // ORACLE is the best configuration every hour: CLOVER cannot beat it.
    expect(rowOf(result, "objective f, CLOVER / ORACLE").ours).toBeLessThanOrEqual(1 + 1e-9);
    expect(rowOf(result, "carbon vs BASE").ours).toBeLessThan(0);
    expect(rowOf(result, "accuracy vs BASE").ours).toBeLessThanOrEqual(0);
    // CLOVER starts from BASE, which meets its own SLA, and only adopts configurations that meet it too.
    expect(rowOf(result, "hours meeting").ours).toBe(1);
    expect(result.inputs).toMatchObject({ trace: { from: "2022-03-01T00:00:00.000Z", hours: 8 }, service: { gpus: 2 } });
  });

  it("reads the grid given with --grid instead of CISO", async () => {
    const grid = "../shared/data/grid-2022/ERCO-2022H1.csv";
    const ciso = await cloverReproduction.run(quickOptions());
    const erco = await cloverReproduction.run(quickOptions({ grids: [grid] }));
    expect(erco.inputs).toMatchObject({ files: { grid } });
    expect((erco.inputs as { trace: { baseCi: number } }).trace.baseCi).not.toBe((ciso.inputs as { trace: { baseCi: number } }).trace.baseCi);
    await expect(cloverReproduction.run(quickOptions({ grids: ["../shared/data/grid-2022/nowhere.csv"] }))).rejects.toThrow(/nowhere\.csv: no such file/);
  });
});
