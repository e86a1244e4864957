import { classCounts, measuredDemand } from "../src/core/forecast/demand-estimate.ts";
import { classTokenCounts, measuredShapes } from "../src/core/forecast/request-shape.ts";
import { assemblePlanningInput } from "../src/core/planning/fleet-input.ts";
import { fleetRows } from "../src/core/planning/fleet-profile.ts";
import { planWithPolicy } from "../src/core/policies/registry.ts";
import { samePolicy, type Policy } from "../src/core/schemas/fleet.ts";
import type { Plan } from "../src/core/schemas/plan.ts";
import { controlStub, type CronOutcome } from "../durable-objects/control-do.ts";
import type { PlanSummary } from "../durable-objects/plan-store.ts";
import type { CronDeps } from "./cron-deps.ts";
import { powerForecastMaxAgeMs } from "../src/edge/env.ts";

/**
 * A planner run's outcome, with the stored plan's summary when one was published. `unplannable`
 * marks the failures the fleet's policy is to blame for: its planner, given a complete input,
 * threw (e.g. Clover with no model variant that fits a whole GPU of the fleet) or made a plan that
 * does not parse or fit the fleet. Runs skipped for want of a fleet, profile, forecast or demand,
 * or not yet due, a solver that did not load, and a plan the store refused for its version (one
 * newer is in force) do not carry it.
 */
export type PlannerRun = CronOutcome & { plan?: PlanSummary; unplannable?: true };

/** A run as its history records it (cron runs, carbon trigger firings): status and message, no more. */
export function cronOutcome(run: PlannerRun): CronOutcome {
  return run.message === undefined ? { status: run.status } : { status: run.status, message: run.message };
}

/** Slack on a cadence, in cadence time: a run this close to due counts as due (cron times jitter). */
const DUE_SLACK_MS = 30_000;

/**
 * The fleet planner's run (every 5 minutes from the cron; `POST /admin/v1/replan`,
 * a changed `PUT /admin/v1/policy` or `PUT /admin/v1/fleet` and the carbon trigger `force` it): plans when the policy's cadence is due
 * since the plan in force was made (or there is none, another policy made it, or the fleet's policy
 * or weights changed after it was stored), measures demand and each class's mean request from
 * the edge's counters since the last run, assembles the input from ControlDO (fleet, power and load forecasts, demand, the plan in
 * force), plans through the policy registry (`deps.policies`) and stores the plan through the plan
 * store (whose version rules apply; a plan made under a policy the fleet no longer has is refused). `skipped` says what is missing (fleet, profile table, demand)
 * or when the next run is due; a planner that throws or makes a plan that does not fit the fleet
 * (`unplannable`), a solver that does not load or a plan the store refuses is an `error` and the current plan stays. `CADENCE_SPEEDUP` runs cadences faster (the local stack's sped-up clock).
 * With `policy` (a policy or fleet change's own run) it plans only under that policy: when another
 * change replaced it meanwhile, the run is `skipped` (that change plans its own).
 */
export async function runPlannerLong(env: Env, nowMs: number, deps: CronDeps, o: { force?: boolean; policy?: Policy } = {}): Promise<PlannerRun> {
  const control = controlStub(env);
  const ctx = await control.planningContext();
  if (!ctx.fleet) return { status: "skipped", message: "no fleet is configured" };
  if (o.policy && !samePolicy(o.policy, ctx.fleet.policy)) {
    return { status: "skipped", message: `the policy changed again before ${o.policy.kind} planned (to ${ctx.fleet.policy.kind}); the later change plans its own` };
  }
  const entry = deps.policies[ctx.fleet.policy.kind];
  const { name, cadenceMs } = entry.fleetPlanner;
  const waitMs = o.force ? 0 : untilDue(ctx.plan, entry.kind, ctx.policyChangedSincePlan, cadenceMs, nowMs, cadenceSpeedup(env));
  if (waitMs > 0) return { status: "skipped", message: `${name}: the plan in force is ${ctx.plan!.version}; the next is due in ${(waitMs / 1000).toFixed(0)} s (every ${cadenceMs / 60_000} min)` };

  const sample = { atMs: nowMs, counts: classCounts(ctx.metricTotals), tokens: classTokenCounts(ctx.metricTotals) };
  const measured = ctx.demandSample ? measuredDemand(ctx.demandSample, sample) : undefined;
  const meanRequests = measuredShapes(ctx.demandSample?.tokens, sample.tokens);
  await control.setDemandSample(sample);
  const profile = fleetRows(ctx.fleet, await control.profileRows());
  if (profile.length === 0) return { status: "skipped", message: `${name}: no profile table for this fleet's models and GPUs (PUT /admin/v1/profile)` };
  const assembled = assemblePlanningInput({ fleet: ctx.fleet, plan: ctx.plan, forecasts: ctx.forecasts, measured, meanRequests, profile, nowMs, powerForecastMaxAgeMs: powerForecastMaxAgeMs(env) });
  if (!assembled.ok) return { status: "skipped", message: `${name}: ${assembled.message}; the current plan stays` };

  let solver, plan;
  try {
    solver = await deps.solver();
  } catch (error) {
    return { status: "error", message: `${name}: the solver did not load: ${messageOf(error)}` };
  }
  try {
    plan = planWithPolicy(entry, ctx.fleet.policy, assembled.input, solver, ctx.fleet).plan;
  } catch (error) {
    return { status: "error", message: `${name} failed: ${messageOf(error)}`, unplannable: true };
  }
  const stored = await control.putPlan({ ...plan, notes: [...plan.notes, ...assembled.notes] }, { madeUnder: ctx.fleet.policy });
  // A plan that does not parse or fit the fleet is the policy's doing; a version the store holds newer is not.
  const policysFault = !stored.ok && stored.status === 400 && stored.param !== "version";
  if (!stored.ok) return { status: "error", message: `${name}: plan version ${plan.version} was refused: ${stored.message}`, ...(policysFault ? { unplannable: true as const } : {}) };
  const shortfall = Object.entries(stored.value.shortfall).filter(([, rps]) => rps > 0);
  const short = shortfall.length > 0 ? `; shortfall ${shortfall.map(([c, rps]) => `${c} ${rps.toFixed(2)} req/s`).join(", ")}` : "";
  return { status: "ok", message: `${name}: plan version ${stored.value.version}, ${stored.value.instances} instance entries at ${stored.value.sites} sites${short}`, plan: stored.value };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Milliseconds (wall time) until the policy's next plan is due; 0 when it is, and when another policy made the plan in force or the policy changed since. */
function untilDue(plan: Plan | null, policy: string, policyChangedSincePlan: boolean, cadenceMs: number, nowMs: number, speedup: number): number {
  if (!plan || plan.policy !== policy || policyChangedSincePlan) return 0;
  const elapsed = (nowMs - plan.createdAtMs) * speedup;
  return elapsed >= cadenceMs - DUE_SLACK_MS ? 0 : Math.ceil((cadenceMs - DUE_SLACK_MS - elapsed) / speedup);
}

/** CADENCE_SPEEDUP: policy cadences pass this many times faster than wall time (1 unless set). */
function cadenceSpeedup(env: Env): number {
  const x = Number(env.CADENCE_SPEEDUP);
  return Number.isFinite(x) && x > 0 ? x : 1;
}
