import { describe } from "vitest";
import type { LpSolver } from "../../src/core/ports/lp-solver.ts";
import { highsSolver } from "../../src/solver/highs-solver.ts";
import { javascriptLpSolver } from "../../src/solver/javascript-lp-solver.ts";
import { lpSolverContract } from "../contracts/lp-solver-contract.ts";

/** Both adapters of the LpSolver port must answer alike. */
const adapters: Array<[string, () => Promise<LpSolver>]> = [
  ["javascript-lp-solver", async () => javascriptLpSolver()],
  ["HiGHS (WebAssembly)", () => highsSolver()],
];

describe.each(adapters)("LpSolver port over %s", (_name, make) => lpSolverContract(make));
