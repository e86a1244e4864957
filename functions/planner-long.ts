import { classCounts, measuredDemand } from "../src/core/forecast/demand-estimate.ts";
import { controlStub, type CronOutcome } from "../durable-objects/control-do.ts";
import type { PlanSummary } from "../durable-objects/plan-store.ts";
import type { CronDeps } from "./cron-deps.ts";
import { powerForecastMaxAgeMs } from "../src/worker/env.ts";
import { assemblePlanningInput } from "./planning-input.ts";

/** A planner run's outcome, with the stored plan's summary when one was published. */
export type PlannerRun = CronOutcome & { plan?: PlanSummary };

/**
 * The 15-minute Planner-L run (also `POST /admin/v1/replan`): measures demand from the edge's
 * counters since the last run, looks up the fleet policy's planner in the registry, assembles its
 * input from ControlDO (fleet, power and load forecasts, demand, the plan in force), plans and
 * stores the plan through the plan store (whose version rules apply). `skipped` says what is
 * missing (fleet, registered planner, profile table, demand); a planner that throws or a plan the
 * store refuses is an `error` and the current plan stays.
 */
export async function runPlannerLong(env: Env, nowMs: number, deps: CronDeps): Promise<PlannerRun> {
  const control = controlStub(env);
  const ctx = await control.planningContext();
  if (!ctx.fleet) return { status: "skipped", message: "no fleet is configured" };
  const sample = { atMs: nowMs, counts: classCounts(ctx.metricTotals) };
  const measured = ctx.demandSample ? measuredDemand(ctx.demandSample, sample) : undefined;
  await control.setDemandSample(sample);

  const policy = ctx.fleet.policy.kind;
  const entry = deps.planners(policy);
  if (!entry) return { status: "skipped", message: `no fleet planner is registered for policy ${policy} (registerFleetPlanner in functions/planner-registry.ts)` };
  const profile = await entry.profile(ctx.fleet, await control.profileRows());
  if (!profile || profile.length === 0) return { status: "skipped", message: `${entry.name}: no profile table for this fleet's models and GPUs (PUT /admin/v1/profile)` };
  const assembled = assemblePlanningInput({ fleet: ctx.fleet, plan: ctx.plan, forecasts: ctx.forecasts, measured, profile, nowMs, powerForecastMaxAgeMs: powerForecastMaxAgeMs(env) });
  if (!assembled.ok) return { status: "skipped", message: `${entry.name}: ${assembled.message}` };

  let plan;
  try {
    plan = entry.create(ctx.fleet).plan(assembled.input, deps.solver).plan;
  } catch (error) {
    return { status: "error", message: `${entry.name} failed: ${error instanceof Error ? error.message : String(error)}` };
  }
  const stored = await control.putPlan({ ...plan, notes: [...plan.notes, ...assembled.notes] });
  if (!stored.ok) return { status: "error", message: `${entry.name}: plan version ${plan.version} was refused: ${stored.message}` };
  const shortfall = Object.entries(stored.value.shortfall).filter(([, rps]) => rps > 0);
  const short = shortfall.length > 0 ? `; shortfall ${shortfall.map(([c, rps]) => `${c} ${rps.toFixed(2)} req/s`).join(", ")}` : "";
  return { status: "ok", message: `${entry.name}: plan version ${stored.value.version}, ${stored.value.instances} instance entries at ${stored.value.sites} sites${short}`, plan: stored.value };
}
