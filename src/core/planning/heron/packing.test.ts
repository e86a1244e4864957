import { describe, expect, it } from "vitest";
import { Plan } from "../../schemas/plan.ts";
import type { ClassId } from "../../schemas/ids.ts";
import { heronPacking, type PackingClass } from "./packing.ts";

const classes: PackingClass[] = ["LS", "LM", "LL", "MS"].map((id) => ({ id: id as ClassId, inputBin: id[0] === "L" ? 2 : 1, outputBin: { S: 0, M: 1, L: 2 }[id[1] as "S" | "M" | "L"] }));
const entry = (id: string, classId: string, rps: number) => ({ id, model: "m", variant: "base", tp: 8, gpus: [0, 1, 2, 3, 4, 5, 6, 7].map((g) => g + 8 * Number(id.at(-1))), clock: { mode: "locked", mhz: 1980 }, loadRps: { [classId]: rps } });
const plan = Plan.parse({
  version: 3,
  createdAtMs: 0,
  validUntilMs: 900_000,
  policy: "heron",
  sites: [{ site: "a", powerCapW: 1e6, instances: [entry("ll-0", "LL", 2), entry("lm-1", "LM", 4), entry("ls-2", "LS", 6), entry("ms-3", "MS", 5)] }],
  routing: {
    LL: [{ site: "a", instance: "ll-0", weight: 2 }],
    LM: [{ site: "a", instance: "lm-1", weight: 4 }],
    LS: [{ site: "a", instance: "ls-2", weight: 6 }],
    MS: [{ site: "a", instance: "ms-3", weight: 5 }],
  },
});

describe("heronPacking", () => {
  it("moves smaller requests (LS) into the spare capacity of a larger class's instances (LM)", () => {
    const { routing, moves } = heronPacking(plan, classes, { LL: 2, LM: 1, LS: 6, MS: 5 });
    expect(moves).toEqual([{ from: "LS", to: "LM", rps: 3 }]);
    expect(routing).toEqual({
      LS: [
        { site: "a", instance: "ls-2", weight: 3 },
        { site: "a", instance: "lm-1", weight: 3 },
      ],
    });
  });

  it("starts with the largest class and takes from its nearest smaller classes first", () => {
    // LS's instances end up with spare capacity only because LS moved away: that stays free for idling (MS does not move in).
    const { moves } = heronPacking(plan, classes, { LL: 0, LM: 1, LS: 6, MS: 1 });
    expect(moves).toEqual([
      { from: "LM", to: "LL", rps: 1 },
      { from: "LS", to: "LL", rps: 1 },
      { from: "LS", to: "LM", rps: 3 },
    ]);
  });

  it("never moves larger requests (LS) onto a smaller class's spare instances (MS)", () => {
    expect(heronPacking(plan, classes, { LL: 2, LM: 4, LS: 6, MS: 0 })).toEqual({ routing: {}, moves: [] });
  });
});
