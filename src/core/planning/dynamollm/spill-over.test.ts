import { describe, expect, it } from "vitest";
import type { ClassId } from "../../schemas/ids.ts";
import { clusterManager, fitToBudget, poolShares } from "./cluster-manager.ts";
import { loadTemplate } from "./load-template.ts";
import { floorWithSpill, poolOrder } from "./spill-over.ts";

const id = (s: string) => s as ClassId;

describe("floorWithSpill (DynamoLLM cluster manager: floor, remainder to the next larger pool)", () => {
  it("does the arithmetic by hand", () => {
    // SS: 25 / 10 = 2.5 nodes -> 2 nodes serve 20, 5 req/s spill.
    // SM: 1.5 / 5 = 0.3 own + 5 / 10 = 0.5 spilled = 0.8 nodes -> 0 nodes, all of it spills.
    // SL (last): 2.8 / 2 = 1.4 + 0.3 + 0.5 = 2.2 nodes -> rounds up to 3.
    const pools = floorWithSpill([
      { classId: id("SS"), demandRps: 25, maxLoadPerNodeRps: 10 },
      { classId: id("SM"), demandRps: 1.5, maxLoadPerNodeRps: 5 },
      { classId: id("SL"), demandRps: 2.8, maxLoadPerNodeRps: 2 },
    ]);
    expect(pools.map((p) => p.nodes)).toEqual([2, 0, 3]);
    expect(pools[0]!.served.SS).toBeCloseTo(20, 9);
    expect(pools[0]!.spilled.SS).toBeCloseTo(5, 9);
    expect(pools[1]!.offeredNodes).toBeCloseTo(0.8, 9);
    expect(pools[1]!.served).toEqual({});
    expect(pools[1]!.spilled.SS).toBeCloseTo(5, 9);
    expect(pools[1]!.spilled.SM).toBeCloseTo(1.5, 9);
    expect(pools[2]!.offeredNodes).toBeCloseTo(2.2, 9);
    for (const [c, rps] of Object.entries({ SS: 5, SM: 1.5, SL: 2.8 })) expect(pools[2]!.served[id(c)]).toBeCloseTo(rps, 9);
    expect(pools[2]!.spilled).toEqual({});
  });

  it("keeps exact multiples whole and passes on a share of every class a pool was offered", () => {
    const pools = floorWithSpill([
      { classId: id("A"), demandRps: 30, maxLoadPerNodeRps: 10 },
      { classId: id("B"), demandRps: 12, maxLoadPerNodeRps: 4 },
      { classId: id("C"), demandRps: 0, maxLoadPerNodeRps: 1 },
    ]);
    expect(pools.map((p) => p.nodes)).toEqual([3, 3, 0]);
    expect(pools[2]!.served).toEqual({});
    const mixed = floorWithSpill([
      { classId: id("A"), demandRps: 5, maxLoadPerNodeRps: 10 },
      { classId: id("B"), demandRps: 6, maxLoadPerNodeRps: 4 },
      { classId: id("C"), demandRps: 0, maxLoadPerNodeRps: 1 },
    ]);
    // B: 0.5 (A) + 1.5 (B) = 2 nodes exactly: nothing spills on.
    expect(mixed.map((p) => p.nodes)).toEqual([0, 2, 0]);
    expect(mixed[1]!.served.A).toBeCloseTo(5, 9);
    expect(mixed[1]!.served.B).toBeCloseTo(6, 9);
  });

  it("sends a class no configuration serves to the next pool, counted at that pool's ML", () => {
    const pools = floorWithSpill([
      { classId: id("A"), demandRps: 3, maxLoadPerNodeRps: 0 },
      { classId: id("B"), demandRps: 1, maxLoadPerNodeRps: 2 },
    ]);
    expect(pools[0]!.nodes).toBe(0);
    expect(pools[1]!.offeredNodes).toBeCloseTo(2, 9);
    expect(pools[1]!.nodes).toBe(2);
  });

  it("orders pools smallest request type first (input bin, then output bin), as Table I", () => {
    const classes = ["LL", "SM", "MS", "SS", "LS"].map((c) => ({ id: id(c), inputBin: "SML".indexOf(c[0]!), outputBin: "SML".indexOf(c[1]!) }));
    expect(poolOrder(classes).map((c) => c.id)).toEqual(["SS", "SM", "MS", "LS", "LL"]);
  });
});

describe("clusterManager on a fixed cluster", () => {
  const classes = [
    { id: id("SS"), inputBin: 0, outputBin: 0 },
    { id: id("SL"), inputBin: 0, outputBin: 2 },
  ];

  it("cuts the pools in proportion when they want more nodes than the cluster has", () => {
    const d = clusterManager({ classes, peakRps: { SS: 40, SL: 20 }, maxLoadPerNodeRps: { SS: 10, SL: 5 }, availableNodes: 4 });
    expect(d.missingNodes).toBe(4);
    expect(d.pools.map((p) => p.nodes)).toEqual([2, 2]);
  });

  it("forwards the epoch's spill fractions to the load of the moment", () => {
    const d = clusterManager({ classes, peakRps: { SS: 25, SL: 2 }, maxLoadPerNodeRps: { SS: 10, SL: 5 }, availableNodes: 10 });
    const shares = poolShares(d.pools, { SS: 25, SL: 2 });
    expect(shares.get(id("SS"))!.SS).toBeCloseTo(0.8, 9);
    expect(shares.get(id("SL"))!.SS).toBeCloseTo(0.2, 9);
    expect(shares.get(id("SL"))!.SL).toBeCloseTo(1, 9);
  });

  it("sends a class the forecast missed to the first pool from its own on that has nodes", () => {
    const d = clusterManager({ classes, peakRps: { SS: 0, SL: 6 }, maxLoadPerNodeRps: { SS: 10, SL: 5 }, availableNodes: 10 });
    expect(d.pools.map((p) => p.nodes)).toEqual([0, 2]);
    expect(poolShares(d.pools, { SS: 0, SL: 6 }).get(id("SL"))).toEqual({ SL: 1, SS: 1 });
  });

  it("fitToBudget gives spare units to the largest remainders", () => {
    expect(fitToBudget([3, 1, 4], 4)).toEqual([2, 0, 2]);
    expect(fitToBudget([3, 1, 4], 9)).toEqual([3, 1, 4]);
    expect(fitToBudget([1, 1, 1], 2)).toEqual([1, 1, 0]);
  });
});

describe("loadTemplate (weekly template forecast)", () => {
  it("forecasts a time of week as the mean of past weeks then, and the epoch peak over its slots", () => {
    const hour = 3600_000;
    const week = 7 * 24 * hour;
    const history = [0, 1, 2].flatMap((w) => [
      { tMs: w * week + 10 * hour, rps: { MM: 4 + w } },
      { tMs: w * week + 10 * hour + 5 * 60_000, rps: { MM: 10 } },
    ]);
    const f = loadTemplate(history);
    expect(f.rateAt(id("MM"), 3 * week + 10 * hour)).toBeCloseTo(5, 9);
    expect(f.peakOver(id("MM"), 3 * week + 10 * hour, 3 * week + 10 * hour + 30 * 60_000)).toBeCloseTo(10, 9);
    expect(f.rateAt(id("MM"), 3 * week + 3 * hour)).toBeCloseTo(7.5, 9); // no history at 3:00: the overall mean
    expect(f.rateAt(id("LL"), 0)).toBe(0);
  });
});
