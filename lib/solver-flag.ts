import type { LpSolver } from "../src/core/ports/lp-solver.ts";
import { highsSolver } from "../src/solver/highs-solver.ts";
import { javascriptLpSolver } from "../src/solver/javascript-lp-solver.ts";
import { CliError } from "./cli-error.ts";

/** The LP solver a `--solver` flag names: HiGHS compiled to WebAssembly (`highs`) or javascript-lp-solver (`jslp`). */
export async function solverFlag(name: string): Promise<LpSolver> {
  if (name === "highs") return highsSolver();
  if (name === "jslp") return javascriptLpSolver();
  throw new CliError(`--solver must be highs or jslp, got '${name}'`);
}
