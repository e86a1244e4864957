import { describe, expect, it } from "vitest";
import { highsSolver } from "../../solver/highs-solver.ts";
import { javascriptLpSolver } from "../../solver/javascript-lp-solver.ts";
import type { DeferrableWork, DeferralSite } from "../schemas/deferral.ts";
import { COST, perfectWorld, site, work } from "./deferral.test-helper.ts";
import { offlineOptimum } from "./offline-optimum.ts";

/** The least carbon of every way to put each request into an allowed (slot, site), by exhaustive search. */
function bruteForce(sites: readonly DeferralSite[], jobs: readonly DeferrableWork[], first: number[], last: number[]): number {
  const room = sites.map((s) => s.spareGpus.map((g) => Math.floor((g * 900) / COST.gpuSeconds)));
  const requests = jobs.flatMap((j, i) => Array.from({ length: j.requests }, () => i));
  let best = Infinity;
  const place = (r: number, carbon: number) => {
    if (carbon >= best) return;
    if (r === requests.length) return void (best = carbon);
    const j = requests[r]!;
    for (let t = first[j]!; t <= last[j]!; t++) {
      for (let s = 0; s < sites.length; s++) {
        if (room[s]![t]! === 0) continue;
        room[s]![t]!--;
        place(r + 1, carbon + 0.01 * sites[s]!.carbonGPerKwh[t]!);
        room[s]![t]!++;
      }
    }
  };
  place(0, 0);
  return best;
}

describe("offlineOptimum", () => {
  it("finds the least-carbon placement of a small case, as exhaustive search does, with both solvers", async () => {
    // Each site holds 1 or 2 requests per slot (GPU-seconds), jobs have overlapping windows.
    const sites = [site("a", [120, 80, 300, 60], [0.2, 0.1, 0.2, 0.1]), site("b", [90, 200, 40, 250], [0.1, 0.2, 0.1, 0.2])];
    const jobs = [work("x", 2, 0, 1), work("y", 3, 0, 3), work("z", 2, 2, 3)];
    const expected = bruteForce(sites, jobs, [0, 0, 2], [1, 3, 3]);
    for (const solver of [javascriptLpSolver(), await highsSolver()]) {
      const plan = offlineOptimum(perfectWorld(sites, jobs), solver);
      expect(plan.late).toEqual([]);
      expect(plan.plannedCarbonG).toBeCloseTo(expected, 6);
    }
    // By hand: slots (capacity) are a: 2,1,2,1 and b: 1,2,1,2 requests; the seven cheapest cells are
    // b2 (40) and a3 (60) for z, then a1 (80), b0 (90), a0 (120) twice and b1 (200) for x and y.
    expect(expected).toBeCloseTo(0.01 * (40 + 60 + 80 + 90 + 120 + 120 + 200), 9);
  });
});
