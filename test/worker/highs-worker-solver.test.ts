import { describe } from "vitest";
import { workerHighsSolver } from "../../src/solver/highs-worker-solver.ts";
import { lpSolverContract } from "../contracts/lp-solver-contract.ts";

// The Worker's solver (HiGHS from its compiled module) answers in workerd as HiGHS does on Node.
describe("LpSolver port over HiGHS in workerd", () => lpSolverContract(workerHighsSolver));
