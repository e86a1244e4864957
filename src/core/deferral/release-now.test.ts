import { describe, expect, it } from "vitest";
import { javascriptLpSolver } from "../../solver/javascript-lp-solver.ts";
import { DeferralRelease } from "../schemas/deferral.ts";
import { input, site, work } from "./deferral.test-helper.ts";
import { releaseNow } from "./release-now.ts";

const solver = javascriptLpSolver();

describe("releaseNow", () => {
  it("releases now only what is cleanest now, and holds the rest for its cleaner slot", () => {
    // The wind farm holds 10 now (one GPU, 10 requests a slot) and nothing later; the grid is cleaner in slot 1 than now.
    const out = releaseNow(input([site("grid", [400, 100, 300]), site("wind", [11, 11, 11], [1, 0, 0])], [work("batch", 15, 0, 2)]), solver);
    expect(DeferralRelease.parse(out)).toEqual(out);
    expect(out.release).toEqual([{ workId: "batch", site: "wind", requests: 10 }]);
    expect(out.serveNow).toEqual([]);
    expect(out.plan.slots.filter((u) => u.slot === 1 && u.site === "grid").reduce((n, u) => n + u.requests, 0)).toBeCloseTo(5, 6);
  });

  it("tells the edge to serve at once work due now that found no spare capacity, and nothing that can still wait", () => {
    const out = releaseNow(input([site("grid", [300, 100], [1, 1])], [work("due", 12, 0, 0), work("flex", 1, 0, 1)]), solver);
    expect(out.release).toEqual([{ workId: "due", site: "grid", requests: 10 }]);
    expect(out.serveNow).toEqual([{ workId: "due", requests: 2 }]);
  });

  it("refuses input that breaks its schema before planning anything", () => {
    const bad = input([site("grid", [300, 100])], [work("a", 5, 0, 1), work("a", 3, 0, 1)]);
    expect(() => releaseNow(bad, solver)).toThrow(/duplicate work id|work id/);
    expect(() => releaseNow({ ...input([site("grid", [300])], []), sites: [{ ...site("grid", [300, 100]), spareGpus: [1] }] }, solver)).toThrow(/spareGpus has 1 slots/);
  });
});
