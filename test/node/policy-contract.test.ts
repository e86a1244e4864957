import { describe, expect, it } from "vitest";
import example from "../../docs/fleets/example.json";
import { assemblePlanningInput } from "../../src/core/planning/fleet-input.ts";
import { CONTRACT_NOW, contractFleet, contractForecasts, contractProfile, planContractIssues } from "../../src/core/policies/policy-contract.test-helper.ts";
import { planWithPolicy, POLICIES } from "../../src/core/policies/registry.ts";
import { PolicyKind } from "../../src/core/schemas/fleet.ts";
import { javascriptLpSolver } from "../../src/solver/javascript-lp-solver.ts";

const solver = javascriptLpSolver();

/** The contract every policy of the registry keeps on Node: the cron's own path from fleet to plan. */
describe.each(PolicyKind.options)("policy contract: %s", (kind) => {
  const entry = POLICIES[kind];
  const fleet = contractFleet(example, entry);
  const profile = contractProfile(fleet).rows;
  const plan = () => {
    const assembled = assemblePlanningInput({ fleet, plan: null, forecasts: contractForecasts(fleet), measured: undefined, profile, nowMs: CONTRACT_NOW });
    if (!assembled.ok) throw new Error(assembled.message);
    return { input: assembled.input, plan: planWithPolicy(entry, fleet.policy, assembled.input, solver).plan };
  };

  it("plans the example fleet within every site's power at the highest clock each instance may run", () => {
    const { input, plan: made } = plan();
    const powerW = Object.fromEntries(input.sites.map((s) => [s.id, s.powerW]));
    expect(planContractIssues(made, fleet, entry, profile, powerW)).toEqual([]);
  });
});
