import { describe, expect, it } from "vitest";
import { runAtSubmission } from "./at-submission.ts";
import { perfectWorld, site, work } from "./deferral.test-helper.ts";

describe("runAtSubmission", () => {
  it("runs each request in its submission slot at the cleanest site with room, never later in a cleaner slot", () => {
    const world = perfectWorld([site("grid", [300, 50, 50]), site("wind", [11, 11, 11], [1, 0, 0])], [work("x", 14, 0, 2)]);
    const run = runAtSubmission(world);
    expect(run.commits[0]).toEqual([
      { workId: "x", site: "wind", requests: 10 },
      { workId: "x", site: "grid", requests: 4 },
    ]);
    expect(run.carbonG).toBeCloseTo(0.01 * (10 * 11 + 4 * 300), 9);
    expect(run.deadlineMisses).toBe(0);
  });

  it("makes work that finds no room wait, first come first served, for the next slot with room", () => {
    const world = perfectWorld([site("a", [100, 100, 100], [1, 0, 1])], [work("first", 8, 0, 0), work("second", 5, 0, 2), work("later", 3, 1, 2)]);
    const run = runAtSubmission(world);
    expect(run.commits).toEqual([
      [{ workId: "first", site: "a", requests: 8 }, { workId: "second", site: "a", requests: 2 }],
      [],
      [{ workId: "second", site: "a", requests: 3 }, { workId: "later", site: "a", requests: 3 }],
    ]);
    expect(run.deadlineMisses).toBe(0);
  });
});
