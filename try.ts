import example from "./docs/fleets/example.json";
import { assemblePlanningInput } from "./src/core/planning/fleet-input.ts";
import { CONTRACT_NOW, contractFleet, contractForecasts, contractProfile } from "./src/core/policies/policy-contract.test-helper.ts";
import { planWithPolicy, POLICIES } from "./src/core/policies/registry.ts";
import { PolicyKind } from "./src/core/schemas/fleet.ts";
import { javascriptLpSolver } from "./src/solver/javascript-lp-solver.ts";
for (const kind of PolicyKind.options) {
  const entry = POLICIES[kind]; const fleet = contractFleet(example, entry); const profile = contractProfile(fleet).rows;
  const a = assemblePlanningInput({ fleet, plan: null, forecasts: contractForecasts(fleet), measured: undefined, profile, nowMs: CONTRACT_NOW });
  if (!a.ok) { console.log(kind, a.message); continue; }
  const { plan } = planWithPolicy(entry, fleet.policy, a.input, javascriptLpSolver());
  console.log(kind, a.input.sites.map(s=>[s.id, Math.round(s.powerW), s.carbonGPerKwh, s.rttMs]), JSON.stringify(plan.shortfall));
  for (const s of plan.sites) console.log("  ", s.site, s.queue, s.instances.map(i => `${i.id} x${i.replicas} ${i.variant} ${i.role} ${i.mig ?? ""} ${JSON.stringify(i.clock)} gpus=${i.gpus.join(",")}`).join(" | "));
  console.log("   notes:", plan.notes.slice(0, 3).join(" / "));
}
