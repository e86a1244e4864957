import { carbonTrigger } from "../src/core/forecast/carbon-trigger.ts";
import type { Fleet } from "../src/core/schemas/fleet.ts";
import type { ControlDO, CronOutcome } from "../durable-objects/control-do.ts";
import type { CronDeps } from "./cron-deps.ts";
import { cronOutcome, runPlannerLong } from "./planner-long.ts";

/**
 * The policy's carbon trigger after a forecast refresh (Clover's, for the policies whose registry
 * entry has one): when any site's intensity moved more than the entry's threshold from its value at
 * the last optimisation, the policy's fleet planner re-optimises now (`runPlannerLong`, forced) and
 * the firing is logged in ControlDO. The baseline moves to the current values unless the
 * re-optimisation failed (so the next refresh tries again). Returns a one-line summary for the
 * cron run's message.
 */
export async function runCarbonTrigger(env: Env, control: DurableObjectStub<ControlDO>, fleet: Fleet, current: Record<string, number>, nowMs: number, deps: CronDeps): Promise<string> {
  const entry = deps.policies[fleet.policy.kind];
  if (!entry.carbonTrigger) return `carbon trigger: not used by policy ${entry.kind}`;
  const decision = carbonTrigger(await control.carbonBaseline(), current, entry.carbonTrigger.threshold);
  if (!decision.fire) return `carbon trigger: ${decision.reason}`;
  let outcome: CronOutcome;
  try {
    outcome = cronOutcome(await runPlannerLong(env, nowMs, deps, { force: true }));
  } catch (error) {
    outcome = { status: "error", message: error instanceof Error ? error.message : String(error) };
  }
  const optimiser = entry.fleetPlanner.name;
  await control.recordCarbonTrigger({ atMs: nowMs, policy: entry.kind, reason: decision.reason, moves: decision.moves, optimiser, outcome }, outcome.status === "error" ? null : decision.nextBaseline);
  return `carbon trigger fired (${decision.reason}); ${optimiser}: ${outcome.status}${outcome.message ? ` (${outcome.message})` : ""}`;
}
