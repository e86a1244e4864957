import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { coverDemand, guestKey, unservedDemand } from "./spill-cover.ts";

const none = (n: number) => Array.from({ length: n }, () => 0);

describe("coverDemand", () => {
  it("without edges serves each class up to its own capacity, within the SLO first", () => {
    const c = coverDemand([2, 5], { inSlo: [1, 6], outside: [3, 0] }, []);
    expect(c.ownInSlo).toEqual([1, 5]);
    expect(c.ownOutside).toEqual([1, 0]);
    expect(c.unserved).toEqual([0, 0]);
  });

  it("spills what a class's own instances cannot serve onto a host's capacity within the SLO, never onto capacity outside it", () => {
    const c = coverDemand([1.5, 2], { inSlo: [1, 2.2], outside: [0, 0] }, [{ from: 0, to: 1 }]);
    expect(c.ownInSlo[0]).toBeCloseTo(1, 9);
    expect(c.spilled[0]).toBeCloseTo(0.2, 9);
    expect(c.unserved[0]).toBeCloseTo(0.3, 9);
    expect(c.unserved[1]).toBe(0);
    expect(coverDemand([1, 0], { inSlo: [0, 0], outside: [0, 5] }, [{ from: 0, to: 1 }]).unserved).toEqual([1, 0]);
  });

  it("finds the most it can serve by moving a host's own guest further up (an augmenting path)", () => {
    // A may only go to B; B's own room is taken by B; B may go on to C.
    const c = coverDemand([1, 1, 0], { inSlo: [0, 1, 1], outside: none(3) }, [{ from: 0, to: 1 }, { from: 1, to: 2 }]);
    expect(c.unserved.reduce((a, b) => a + b, 0)).toBeCloseTo(0, 9);
    expect(c.spilled[0]).toBeCloseTo(1, 9);
    expect(c.spilled[1]).toBeCloseTo(1, 9);
  });

  it("prefers a host within the SLO to the class's own capacity outside it", () => {
    const c = coverDemand([1, 0], { inSlo: [0, 1], outside: [1, 0] }, [{ from: 0, to: 1 }]);
    expect(c.spilled[0]).toBeCloseTo(1, 9);
    expect(c.ownOutside[0]).toBe(0);
  });

  it("spills a guest only onto the pieces of its host that admit it, the host's own load taking the rest", () => {
    // Host 1 has 2 req/s where guest 0 meets its own SLO and 3 where only guest 2 does.
    const byGuests = [undefined, { [guestKey([0, 2])]: 2, [guestKey([2])]: 3 }, undefined];
    const c = coverDemand([3, 2, 0], { inSlo: [0, 5, 0], outside: none(3), byGuests }, [{ from: 0, to: 1 }]);
    expect(c.spilled[0]).toBeCloseTo(2, 9);
    expect(c.unserved[0]).toBeCloseTo(1, 9);
    expect(c.ownInSlo[1]).toBeCloseTo(2, 9);
    const admitting = c.pieces.find((p) => p.classIdx === 1 && p.key === "0,2")!;
    const other = c.pieces.find((p) => p.classIdx === 1 && p.key === "2")!;
    expect(admitting.spilled[0]! + admitting.own).toBeLessThanOrEqual(2 + 1e-9);
    expect(other.spilled[0]).toBe(0);
    expect(other.own).toBeCloseTo(2, 9);
  });

  it("moves a host's own load off the only piece that admits a guest (an augmenting path)", () => {
    const byGuests = [undefined, { [guestKey([0])]: 1, [guestKey([])]: 1 }];
    const c = coverDemand([1, 1], { inSlo: [0, 2], outside: none(2), byGuests }, [{ from: 0, to: 1 }]);
    expect(c.unserved).toEqual([0, 0]);
    expect(c.pieces.find((p) => p.key === "0")!.spilled[0]).toBeCloseTo(1, 9);
    expect(c.pieces.find((p) => p.key === "")!.own).toBeCloseTo(1, 9);
  });

  it("serves as much as a maximum flow can, and unservedDemand says the same as the cover", () => {
    // Random networks of 4 classes, each spilling to any dominating one, with guest keys that admit some guests.
    const classes = 4;
    const edges = [{ from: 0, to: 1 }, { from: 0, to: 2 }, { from: 1, to: 3 }, { from: 2, to: 3 }];
    const amount = fc.double({ min: 0, max: 10, noNaN: true });
    const piece = fc.record({ guests: fc.subarray([0, 1, 2]), rps: amount });
    fc.assert(
      fc.property(fc.array(amount, { minLength: classes, maxLength: classes }), fc.array(fc.array(piece, { maxLength: 3 }), { minLength: classes, maxLength: classes }), fc.array(amount, { minLength: classes, maxLength: classes }), (demand, split, outside) => {
        const byGuests = split.map((pieces) => (pieces.length === 0 ? undefined : pieces.reduce<Record<string, number>>((m, p) => ({ ...m, [guestKey(p.guests)]: (m[guestKey(p.guests)] ?? 0) + p.rps }), {})));
        const inSlo = byGuests.map((m) => Object.values(m ?? {}).reduce((a, b) => a + b, 0));
        const capacity = { inSlo, outside, byGuests };
        const cover = coverDemand(demand, capacity, edges);
        expect(unservedDemand(demand, capacity, edges)).toEqual(cover.unserved);
        // Every class's load adds up, and no piece carries more than its capacity.
        demand.forEach((d, c) => {
          const spilledFrom = edges.reduce((s, e, i) => s + (e.from === c ? cover.spilled[i]! : 0), 0);
          expect(cover.ownInSlo[c]! + cover.ownOutside[c]! + spilledFrom + cover.unserved[c]!).toBeCloseTo(d, 6);
          expect(cover.ownOutside[c]!).toBeLessThanOrEqual(outside[c]! + 1e-9);
        });
        for (const p of cover.pieces) expect(p.own + p.spilled.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(p.capacityRps + 1e-6);
        // A guest only on pieces that admit it.
        const admits = (key: string, guest: number) => key === "*" || (key !== "" && key.split(",").map(Number).includes(guest));
        for (const p of cover.pieces) p.spilled.forEach((rps, i) => rps > 1e-9 && expect(admits(p.key, edges[i]!.from)).toBe(true));
        // A class left unserved has no room anywhere it may go: its own capacity is full, and so is every host piece admitting it.
        demand.forEach((_, c) => {
          if (cover.unserved[c]! <= 1e-6) return;
          expect(cover.ownOutside[c]!).toBeCloseTo(outside[c]!, 6);
          for (const p of cover.pieces) {
            const reachable = p.classIdx === c || edges.some((e) => e.from === c && e.to === p.classIdx && admits(p.key, c));
            if (reachable) expect(p.own + p.spilled.reduce((a, b) => a + b, 0)).toBeCloseTo(p.capacityRps, 6);
          }
        });
      }),
      { numRuns: 300, seed: 7 },
    );
  });
});
