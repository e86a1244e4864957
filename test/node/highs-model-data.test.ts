import { describe, expect, it } from "vitest";
import { highsColumns } from "../../src/solver/highs-model-data.ts";

describe("highsColumns: an LpModel as HiGHS's column-wise arrays", () => {
  it("orders columns as the LP text names them, one row per bound, rows ascending in each column", () => {
    const c = highsColumns(
      {
        optimize: "cost",
        opType: "max",
        // "both" has two bounds: two rows, >= before <=.
        constraints: { cap: { max: 10 }, both: { min: 1, max: 4 }, fix: { equal: 2 } },
        variables: {
          a: { cap: 1, both: 2 }, // not in the objective: named first by row "cap", after b and c
          b: { cost: 3, fix: 1, cap: 5 },
          c: { cost: -1, both: 1, unknown: 9 },
          d: { cost: 0, cap: 0 }, // named nowhere: left out
        },
        ints: { b: 1 },
      },
      true,
    );
    expect(c.names).toEqual(["b", "c", "a"]);
    expect(c.minimize).toBe(false);
    expect([...c.colCost]).toEqual([3, -1, 0]);
    expect([...c.rowLower]).toEqual([-Infinity, 1, -Infinity, 2]);
    expect([...c.rowUpper]).toEqual([10, Infinity, 4, 2]);
    // Column b: cap (row 0) 5, fix (row 3) 1; c: both (rows 1, 2) 1; a: cap 1, both 2.
    expect([...c.starts]).toEqual([0, 2, 4, 7]);
    expect([...c.indices]).toEqual([0, 3, 1, 2, 0, 1, 2]);
    expect([...c.values]).toEqual([5, 1, 1, 1, 1, 2, 2]);
    expect([...c.integrality!]).toEqual([1, 0, 0]);
    expect(c.infeasible).toBe(false);
  });

  it("names the first variable when the objective is empty, and drops constraints no variable touches", () => {
    const ok = highsColumns({ optimize: "cost", opType: "min", constraints: { idle: { max: 3 }, need: { min: 1 } }, variables: { x: { need: 1 }, y: { need: 2 } } }, false);
    expect(ok.names).toEqual(["x", "y"]);
    expect([...ok.rowLower]).toEqual([1]);
    expect(ok.integrality).toBeUndefined();
    expect(ok.infeasible).toBe(false);
    // An untouched constraint that 0 violates makes the model infeasible.
    expect(highsColumns({ optimize: "cost", opType: "min", constraints: { idle: { min: 3 } }, variables: { x: { cost: 1 } } }, false).infeasible).toBe(true);
  });

  it("refuses a coefficient or bound that is not finite", () => {
    expect(() => highsColumns({ optimize: "c", opType: "min", constraints: { k: { max: Infinity } }, variables: { x: { c: 1, k: 1 } } }, false)).toThrow("not finite");
    expect(() => highsColumns({ optimize: "c", opType: "min", constraints: {}, variables: { x: { c: NaN } } }, false)).toThrow("not finite");
  });
});
