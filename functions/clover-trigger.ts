import { carbonTrigger } from "../src/core/forecast/carbon-trigger.ts";
import type { Fleet } from "../src/core/schemas/fleet.ts";
import type { ControlDO, CronOutcome } from "../durable-objects/control-do.ts";
import type { CronDeps } from "./cron-deps.ts";
import { CARBON_TRIGGERED_POLICIES } from "./planner-registry.ts";

/**
 * Clover's carbon trigger after a forecast refresh: when the fleet's policy re-optimises on
 * carbon and any site's intensity moved > 5% from its value at the last optimisation, the
 * policy's registered optimiser runs and the firing is logged in ControlDO. The baseline moves to
 * the current values unless the optimiser failed (so the next refresh tries again). Returns a
 * one-line summary for the cron run's message.
 */
export async function runCarbonTrigger(env: Env, control: DurableObjectStub<ControlDO>, fleet: Fleet, current: Record<string, number>, nowMs: number, deps: CronDeps): Promise<string> {
  const policy = fleet.policy.kind;
  if (!CARBON_TRIGGERED_POLICIES.includes(policy)) return `carbon trigger: not used by policy ${policy}`;
  const decision = carbonTrigger(await control.carbonBaseline(), current);
  if (!decision.fire) return `carbon trigger: ${decision.reason}`;
  const optimiser = deps.carbonOptimisers(policy);
  let outcome: CronOutcome;
  if (!optimiser) outcome = { status: "skipped", message: `no carbon optimiser is registered for policy ${policy} (registerCarbonOptimiser in functions/planner-registry.ts)` };
  else {
    try {
      outcome = await optimiser.run({ env, fleet, nowMs, decision });
    } catch (error) {
      outcome = { status: "error", message: error instanceof Error ? error.message : String(error) };
    }
  }
  const record = { atMs: nowMs, policy, reason: decision.reason, moves: decision.moves, optimiser: optimiser?.name ?? null, outcome };
  await control.recordCarbonTrigger(record, outcome.status === "error" ? null : decision.nextBaseline);
  return `carbon trigger fired (${decision.reason}); ${optimiser?.name ?? "no optimiser"}: ${outcome.status}${outcome.message ? ` (${outcome.message})` : ""}`;
}
