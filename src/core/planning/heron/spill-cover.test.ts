import { describe, expect, it } from "vitest";
import { coverDemand, guestKey } from "./spill-cover.ts";

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
});
