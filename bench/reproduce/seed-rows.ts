import { ExperimentRow, type SeedName } from "./experiment.ts";
import { experimentRow } from "./rows.ts";

/** What a row states before `holds` is worked out. */
export interface RowFigures {
  metric: string;
  paper: number;
  ours: number;
  baseline: string;
  unit: "fraction" | "ratio";
  note?: string;
}

/**
 * A row maker for one seed: `compared` judges with `holds` (the paper's direction and 80% of its
 * magnitude); `bounded` is for claims that are bounds ("within 5% of ORACLE", "at most 4% accuracy
 * loss", "comparable attainment"), where reaching 80% of the magnitude would be the wrong test: it
 * holds when ours is on the stated side of the paper's figure, and its note says so.
 *
 * @example
 * const row = seedRows("clover", "npx greenference reproduce clover");
 * row.compared({ metric: "carbon vs BASE", paper: -0.75, ours: -0.7, baseline: "BASE", unit: "fraction" }).holds; // true
 * row.bounded({ metric: "accuracy vs BASE", paper: -0.04, ours: -0.1, baseline: "BASE", unit: "fraction" }, "at-least").holds; // false
 */
export function seedRows(seed: SeedName, command: string) {
  return {
    compared: (f: RowFigures) => experimentRow({ seed, command, ...f }),
    bounded: (f: RowFigures, side: "at-least" | "at-most") => {
      const rule = `a bound: holds when ours is ${side === "at-least" ? ">=" : "<="} the paper's figure`;
      const holds = side === "at-least" ? f.ours >= f.paper : f.ours <= f.paper;
      return ExperimentRow.parse({ seed, command, ...f, holds, note: f.note ? `${f.note}; ${rule}` : rule });
    },
  };
}

/** A number with `digits` significant digits, for tables. */
export function fixed(x: number, digits = 4): string {
  return Number.isFinite(x) ? String(Number(x.toPrecision(digits))) : String(x);
}
