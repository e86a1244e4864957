import { describe, expect, it } from "vitest";
import { javascriptLpSolver } from "../../../solver/javascript-lp-solver.ts";
import { gpuSpecs } from "../../model/gpu-specs.ts";
import { llmSpecs } from "../../model/llm-specs.ts";
import { solveEq1 } from "./eq1.ts";
import { poolManager } from "./pool-manager.ts";
import { layoutName, packNodes, reshardTau, tauSeconds } from "./reshard-overhead.ts";

const solver = javascriptLpSolver();
const tp4 = { tp: 4, mhz: 1980, loadRps: 2, powerW: 900 };
const tp8 = { tp: 8, mhz: 1980, loadRps: 4, powerW: 2100 };

describe("solveEq1 (DynamoLLM Eq. 1 over (TP, clock, load level) options)", () => {
  it("picks the least GPU energy that serves the load within N GPUs", () => {
    expect(solveEq1({ gpus: 8, loadRps: 3, options: [tp4, tp8] }, solver).choices).toEqual([{ ...tp4, count: 2 }]);
    // 16 GPUs, 7 req/s: TP2@1 + TP8@6 (2600 W) beats 3 x TP4 (3000 W) and 7 x TP2 (3500 W).
    const options = [{ tp: 2, mhz: 1980, loadRps: 1, powerW: 500 }, { tp: 4, mhz: 1980, loadRps: 2.5, powerW: 1000 }, { tp: 8, mhz: 1980, loadRps: 6, powerW: 2100 }];
    const r = solveEq1({ gpus: 16, loadRps: 7, options }, solver);
    expect(r.powerW).toBe(2600);
    expect(r.unservedRps).toBe(0);
  });

  it("one clock and load level per TP, and a lower clock when it is cheaper for the load", () => {
    const options = [tp8, { tp: 8, mhz: 1200, loadRps: 2, powerW: 1200 }, { tp: 8, mhz: 1200, loadRps: 3, powerW: 1500 }];
    const r = solveEq1({ gpus: 16, loadRps: 6, options }, solver);
    expect(r.choices).toEqual([{ tp: 8, mhz: 1200, loadRps: 3, powerW: 1500, count: 2 }]);
  });

  it("serves as much as it can when N GPUs are not enough, and reports the rest", () => {
    const r = solveEq1({ gpus: 16, loadRps: 70, options: [{ tp: 2, mhz: 1980, loadRps: 1, powerW: 500 }, { tp: 8, mhz: 1980, loadRps: 6, powerW: 2100 }] }, solver);
    expect(r.choices).toEqual([{ tp: 8, mhz: 1980, loadRps: 6, powerW: 2100, count: 2 }]);
    expect(r.unservedRps).toBe(58);
  });
});

describe("re-sharding overheads (DynamoLLM Table VI)", () => {
  it("names node layouts as the table does and reads it", () => {
    expect(packNodes({ 8: 1, 4: 3, 2: 2 }, 8).map(layoutName)).toEqual(["TP8", "2TP4", "2TP2+TP4"]);
    expect(reshardTau([4], [8])).toBe(1);
    expect(reshardTau([4], [2])).toBe(2);
    expect(reshardTau([2, 2, 2, 2], [8])).toBe(0);
    expect(reshardTau([2], [2, 2, 2, 2])).toBe(4);
    expect(reshardTau([4, 4], [4, 4])).toBe(0);
    expect(reshardTau([], [8])).toBe(0); // a new node: pre-started before the epoch
    expect(reshardTau([2, 2], [8])).toBe(4); // not in the table: its worst case
  });

  it("τ is 1/8 of the weights over NVLink: ~38 ms for Llama2-70B on H100 (the paper measured 50 ms)", () => {
    expect(tauSeconds(llmSpecs["llama2-70b"], gpuSpecs["H100-80GB"])).toBeCloseTo(0.038, 3);
  });
});

describe("poolManager (TP layout at max clock, Overhead Table, staggered)", () => {
  const base = { gpus: 16, loadRps: 8, maxMhz: 1980, nodeGpus: 8, tauS: 0.05, syncS: 2, staggerFraction: 0.5 };

  it("re-shards 2 x TP8 into 4 x TP4 when the epoch's saving pays for it, one node at a time", () => {
    const d = poolManager({ ...base, options: [tp4, tp8], current: { 8: 2 } }, solver);
    expect(d.keptCurrent).toBe(false);
    expect(d.layout).toEqual([{ ...tp4, count: 4 }]);
    expect(d.schedule).toEqual([
      { startS: 0, nodes: [{ from: "TP8", to: "2TP4", seconds: 2.05 }] },
      { startS: 2.05, nodes: [{ from: "TP8", to: "2TP4", seconds: 2.05 }] },
    ]);
    expect(d.reshardEnergyJ).toBeCloseTo(2 * 2.05 * 2100, 6);
  });

  it("keeps the layout in force when re-sharding would cost more than the epoch saves", () => {
    const d = poolManager({ ...base, options: [tp4, { ...tp8, powerW: 1801 }], current: { 8: 2 } }, solver);
    expect(d.keptCurrent).toBe(true);
    expect(d.layout).toEqual([{ ...tp8, powerW: 1801, count: 2 }]);
    expect(d.schedule).toEqual([]);
  });

  it("changes a layout that cannot serve the load, whatever it costs", () => {
    const d = poolManager({ ...base, loadRps: 8, options: [tp4, tp8], current: { 4: 1 } }, solver);
    expect(d.keptCurrent).toBe(false);
    expect(d.unservedRps).toBe(0);
  });

  it("plans only at max clock: the instance manager owns the clock", () => {
    const d = poolManager({ ...base, options: [tp4, tp8, { tp: 4, mhz: 1200, loadRps: 2, powerW: 600 }] }, solver);
    expect(d.layout.every((l) => l.mhz === 1980)).toBe(true);
  });
});
