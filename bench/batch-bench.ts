import { z } from "zod";
import { markdownTable } from "../lib/report/markdown-table.ts";
import type { StackConfig } from "../lib/stack/stack-config.ts";
import { runAtSubmission } from "../src/core/deferral/at-submission.ts";
import { batchOperatingPoint, type BatchOperatingPoint } from "../src/core/deferral/batch-operating-point.ts";
import type { DeferralRun, DeferralWorld } from "../src/core/deferral/deferral-world.ts";
import { offlineOptimum } from "../src/core/deferral/offline-optimum.ts";
import { runOnlineDeferral } from "../src/core/deferral/online-deferral.ts";
import { SERVER_POWER_OVERHEAD } from "../src/core/model/power.ts";
import type { LpSolver } from "../src/core/ports/lp-solver.ts";
import type { ClassId } from "../src/core/schemas/ids.ts";
import type { Plan } from "../src/core/schemas/plan.ts";
import type { ClassScheme } from "../src/core/schemas/request-class.ts";
import { DEFAULT_RECONFIGURATION, simulateFleet } from "../src/core/sim/fleet/fleet-simulator.ts";
import type { FleetResult } from "../src/core/sim/fleet/fleet-result.ts";
import type { FleetPlanner } from "../src/core/sim/fleet/fleet-types.ts";
import { registryFleetPlanner } from "../src/core/sim/planners/registry-planner.ts";
import { highsSolver } from "../src/solver/highs-solver.ts";
import { batchDay } from "./batch/batch-day.ts";
import { batchClassId, batchProfileRows, committedRates, withBatchPlanner, withBatchWorkload } from "./batch/batch-instances.ts";
import { batchJobs, interactiveRequests, interactiveWorkload, JOB_LINES, USERS_UTC_OFFSET_H } from "./batch/batch-workload.ts";
import { batchWorld, FORECAST_MODES } from "./batch/batch-world.ts";

/** Planner-L's period: the interactive plan and the deferral slot. */
const SLOT_S = 900;
const DAY_MS = 86_400_000;

export const BatchBenchOptions = z.object({
  /** Where in the 2022H1 series the day starts (on the hour); the local stack's `seriesStart` when absent. */
  start: z.iso.datetime({ offset: true }).optional(),
  /** Hours over which batch jobs are submitted. */
  submitHours: z.number().int().positive().max(168).default(24),
  /** Each job's completion window (OpenAI's Batch API: 24 h). */
  windowHours: z.number().int().positive().max(168).default(24),
  /** Mean interactive load as a share of what the fleet's GPUs serve at the trace's class mix (peak 1.7x). */
  interactiveLoad: z.number().gt(0).max(1).default(0.4),
  /** Batch requests as a share of the interactive requests over the submission hours. */
  batchVolume: z.number().nonnegative().max(10).default(0.5),
  forecast: z.enum(FORECAST_MODES).default("stack"),
  seed: z.number().int().nonnegative().default(1),
  stepS: z.number().positive().max(60).default(1),
  /** A small profile and a short day, for tests: `submitHours` and `windowHours` of 1 unless given. */
  quick: z.boolean().default(false),
});
export type BatchBenchOptions = z.input<typeof BatchBenchOptions>;

export interface BatchBenchResult {
  batch_requests: number;
  deadline_misses: number;
  carbon_g: { at_submission: number; scheduled: number; offline_optimum: number };
  scheduled_vs_submission: number;
  gap_to_optimum: number;
  interactive_slo_attainment: { without_batch: number; with_batch: number };
  goals: Record<string, boolean>;
  [key: string]: unknown;
}

/**
 * `bench batch`: one simulated day of the local stack's three sites (two wind farms, one grid
 * site) on their real 2022 series: interactive load planned each 15 minutes by the combined
 * planner through the fleet simulator, and batch jobs submitted through the day with 24 h windows.
 * The batch work is placed three ways (at submission at the cleanest site with room; by the
 * deferral scheduler online, re-planning each slot on the forecasts known then; the offline
 * optimum) in the capacity the interactive plans leave, and the scheduled placement runs through
 * the fleet simulator beside the interactive load, whose SLO attainment is compared with the run
 * without batch.
 */
export async function runBatchBench(config: StackConfig, options: BatchBenchOptions, log: (line: string) => void, now: () => number): Promise<BatchBenchResult> {
  const o = BatchBenchOptions.parse({ ...(options.quick ? { submitHours: 1, windowHours: 1 } : {}), ...options });
  const started = now();
  const startMs = Date.parse(o.start ?? config.seriesStart);
  const hours = o.submitHours + o.windowHours;
  const durationS = hours * 3600;
  const slots = durationS / SLOT_S;
  const day = await batchDay(config, startMs, hours, o.quick, log);
  const scheme = day.fleet.classScheme;
  const interactive = interactiveWorkload(startMs, o.interactiveLoad * day.capacityRps, scheme, day.trace.requests);
  const solver = await highsSolver();
  const sim = { sites: day.sites, model: day.model, slo: day.slo, durationS, stepS: o.stepS, slotS: SLOT_S, seed: o.seed };

  // The fleet's plan history: the day before, which the scheduler's forecasts of later slots read (not in --quick).
  const previousDay: Plan[] = [];
  if (!o.quick) {
    log("simulating the day before (interactive load only), for the plan history the forecasts read");
    const before = interactiveWorkload(startMs - DAY_MS, o.interactiveLoad * day.capacityRps, scheme, day.trace.requests);
    simulateFleet({ ...sim, sites: day.sitesOver(startMs - DAY_MS, 24), durationS: 86_400, workload: before, profile: day.profile, planner: recordingPlanner(solver, scheme, previousDay) });
  }
  log(`simulating ${hours} h of interactive load on ${day.sites.map((s) => s.id).join(", ")} (the combined planner every 15 min)`);
  const plans: Plan[] = [];
  const without = simulateFleet({ ...sim, workload: interactive, profile: day.profile, planner: recordingPlanner(solver, scheme, plans) });

  const point = batchOperatingPoint(day.profile, { model: day.model, gpu: day.gpu, shares: day.shares, overhead: SERVER_POWER_OVERHEAD });
  const interactiveSubmitted = interactiveRequests(interactive, o.submitHours * 3600);
  const { work, jobs } = batchJobs({ startMs, submitS: o.submitHours * 3600, windowS: o.windowHours * 3600, requests: Math.round(o.batchVolume * interactiveSubmitted), scheme, trace: day.trace.requests, seed: o.seed });
  const world = batchWorld({ startMs, slotS: SLOT_S, slots, work, sites: day.sites, plans, profile: day.profile, gpu: day.gpu, point, overhead: SERVER_POWER_OVERHEAD, demandRps: interactive.totalRps, mode: o.forecast, startS: DEFAULT_RECONFIGURATION.startS, previousDay, windSites: new Set(config.sites.filter((x) => x.kind === "wind").map((x) => x.id)) });

  log(`placing ${work.reduce((n, w) => n + w.requests, 0)} batch requests (${jobs} jobs): at submission, online (${o.forecast} forecasts), offline optimum`);
  const atSubmission = runAtSubmission(world);
  const scheduleStarted = now();
  const online = runOnlineDeferral(world, solver);
  const scheduleWallS = (now() - scheduleStarted) / 1000;
  const offline = offlineOptimum(world, solver);

  log("simulating the interactive load with the scheduled batch work beside it");
  const rates = committedRates(online.run.commits, work, SLOT_S);
  const batchClasses = Object.keys(point.classes).map(batchClassId);
  const withBatch = simulateFleet({
    ...sim,
    workload: withBatchWorkload(interactive, rates, SLOT_S),
    profile: [...day.profile, ...batchProfileRows(day.profile, point)],
    planner: withBatchPlanner({ plans, rates, point, sites: day.sites, slotS: SLOT_S, startS: DEFAULT_RECONFIGURATION.startS, model: day.model, gpu: day.gpu, profile: day.profile }),
    deferrable: { classes: batchClasses, maxQueueS: SLOT_S },
  });

  const run = online.run;
  const carbon = { at_submission: round(atSubmission.carbonG), scheduled: round(run.carbonG), offline_optimum: round(offline.plannedCarbonG) };
  const slo = { without_batch: interactiveAttainment(without, batchClasses), with_batch: interactiveAttainment(withBatch, batchClasses) };
  const scheduledVsSubmission = run.carbonG / atSubmission.carbonG;
  const gap = run.carbonG / offline.plannedCarbonG - 1;
  const batchSim = batchTally(withBatch, batchClasses);
  return {
    batch_requests: run.requests,
    deadline_misses: run.deadlineMisses,
    carbon_g: carbon,
    scheduled_vs_submission: round(scheduledVsSubmission, 4),
    gap_to_optimum: round(gap, 4),
    interactive_slo_attainment: { without_batch: round(slo.without_batch, 5), with_batch: round(slo.with_batch, 5) },
    goals: {
      deadline_misses_0: run.deadlineMisses === 0,
      scheduled_vs_submission_at_most_0_6: scheduledVsSubmission <= 0.6,
      gap_to_optimum_at_most_0_05: gap <= 0.05,
      interactive_slo_not_lower_with_batch: slo.with_batch >= slo.without_batch,
    },
    spare_capacity_requests_by_site: spareCapacityRequests(world, point, day.shares),
    intensity_g_per_kwh_by_site: intensityWhereSpare(world),
    placements: { at_submission: placement(atSubmission), scheduled: placement(run), offline_optimum: { late_requests: round(offline.late.reduce((n, l) => n + l.requests, 0)), method: offline.method } },
    scheduler: { solves: online.plans.filter(Boolean).length, fallbacks: online.plans.filter((p) => p?.method === "greedy-fallback").length, wall_s: round(scheduleWallS, 1) },
    simulated: {
      batch: batchSim,
      batch_marginal_carbon_g: round((withBatch.carbonKg - without.carbonKg) * 1000),
      interactive_dropped: { without_batch: round(interactiveDropped(without, batchClasses)), with_batch: round(interactiveDropped(withBatch, batchClasses)) },
      power_limited_s: { without_batch: limitedS(without), with_batch: limitedS(withBatch) },
    },
    inputs: {
      simulated: true,
      start: new Date(startMs).toISOString(),
      hours,
      submit_hours: o.submitHours,
      window_hours: o.windowHours,
      ...day.inputs,
      interactive: `DynamoLLM's conversation week shape (peak 1.7x mean, valley mean/1.94), the trace's class mix, on US Central time (UTC${USERS_UTC_OFFSET_H}); mean ${round(interactive.template.meanRatePerS, 3)} req/s = ${o.interactiveLoad} x the fleet's ${round(day.capacityRps, 3)} req/s GPU capacity; planned every 15 min by the combined planner (greenference) with a perfect demand forecast`,
      interactive_requests_submit_hours: Math.round(interactiveSubmitted),
      batch: `${jobs} jobs submitted uniformly over ${o.submitHours} h, ${JOB_LINES.min}-${JOB_LINES.max} lines each (log-uniform), lengths drawn from the trace, ${o.windowHours} h windows; ${o.batchVolume} x the interactive requests of those hours`,
      batch_volume: o.batchVolume,
      interactive_load: o.interactiveLoad,
      batch_operating_point: { tp: point.tp, mhz: point.mhz, energy_j_per_request_above_idle: round(point.mixEnergyJ, 1) },
      spare_capacity: "GPUs the slot's interactive plan and its handover from the previous plan leave (whole batch instances, less a batch instance's start-up per slot); power: the envelope less those interactive instances flat out and the free GPUs at idle",
      carbon_accounting: "batch energy above the GPUs' idle draw, at the wall (server overhead 1.82), x the site's intensity in the slot it runs (wind at its life-cycle 11 g/kWh)",
      forecast: o.forecast,
      slot_s: SLOT_S,
      step_s: o.stepS,
      seed: o.seed,
      wall_s: round((now() - started) / 1000, 1),
    },
    seed: o.seed,
  };
}

/** The combined planner, every 15 minutes, keeping each slot's plan in `plans`. */
function recordingPlanner(solver: LpSolver, scheme: ClassScheme, plans: Plan[]): FleetPlanner {
  const inner = registryFleetPlanner({ kind: "greenference" }, solver, scheme, SLOT_S);
  return { ...inner, plan: (ctx) => (plans[Math.round(ctx.nowS / SLOT_S)] = inner.plan(ctx)) };
}

/** The human view: the three placements, and SLO attainment with and without batch. */
export function batchBenchTable(r: BatchBenchResult): string {
  const p = r.placements as Record<"at_submission" | "scheduled", ReturnType<typeof placement>>;
  const row = (name: string, g: number, x?: ReturnType<typeof placement>) => [name, g.toFixed(0), x ? String(x.deadline_misses) : "-", x ? Object.entries(x.request_share_by_site).map(([s, v]) => `${s} ${(100 * v).toFixed(0)}%`).join(", ") : "-"];
  return [
    `bench batch: ${r.batch_requests} batch requests beside interactive load (simulated)`,
    markdownTable(["placement", "carbon g", "deadline misses", "requests by site"], [
      row("at submission (cleanest site with room then)", r.carbon_g.at_submission, p.at_submission),
      row("scheduled (online, re-planned each slot)", r.carbon_g.scheduled, p.scheduled),
      row("offline optimum (perfect knowledge, one LP)", r.carbon_g.offline_optimum),
    ]),
    `scheduled / at submission ${r.scheduled_vs_submission}; gap to the optimum ${r.gap_to_optimum}`,
    `interactive SLO attainment: ${r.interactive_slo_attainment.without_batch} without batch, ${r.interactive_slo_attainment.with_batch} with it`,
    `goals: ${Object.entries(r.goals).map(([k, v]) => `${k} ${v ? "met" : "NOT met"}`).join("; ")}`,
  ].join("\n");
}

/** Share of interactive requests served within their SLO (batch classes left out; drops count as misses). */
function interactiveAttainment(r: FleetResult, batchClasses: readonly string[]): number {
  let arrived = 0;
  let within = 0;
  for (const [c, x] of Object.entries(r.classes)) {
    if (batchClasses.includes(c)) continue;
    arrived += x.arrived;
    within += x.sloAttainment * x.arrived;
  }
  return arrived > 0 ? within / arrived : 1;
}

/** What became of the batch requests in the simulator (served, dropped after waiting a slot, still waiting at the end). */
function batchTally(r: FleetResult, batchClasses: readonly string[]) {
  const batch = Object.entries(r.classes).filter(([c]) => batchClasses.includes(c)).map(([, x]) => x);
  const sum = (k: "arrived" | "served" | "dropped") => round(batch.reduce((n, x) => n + x[k], 0));
  return { arrived: sum("arrived"), served: sum("served"), dropped: sum("dropped"), waiting_at_end: round(r.inFlight) };
}

function interactiveDropped(r: FleetResult, batchClasses: readonly string[]): number {
  return Object.entries(r.classes).reduce((n, [c, x]) => n + (batchClasses.includes(c) ? 0 : x.dropped), 0);
}

function placement(run: DeferralRun) {
  const bySite = new Map<string, number>();
  let total = 0;
  run.commits.forEach((slot) => {
    for (const c of slot) {
      bySite.set(c.site, (bySite.get(c.site) ?? 0) + c.requests);
      total += c.requests;
    }
  });
  return {
    deadline_misses: run.deadlineMisses,
    late: run.late,
    unfinished: run.unfinished,
    energy_kwh: round(run.energyKwh, 2),
    request_share_by_site: Object.fromEntries([...bySite].map(([s, n]) => [s, round(n / Math.max(1, total), 3)])),
  };
}

/** Batch requests at the trace's class mix that the spare capacity of every (slot, site) could hold, GPUs or power binding, by site. */
function spareCapacityRequests(world: DeferralWorld, point: BatchOperatingPoint, shares: Readonly<Record<string, number>>): Record<string, number> {
  const mix = Object.entries(shares).reduce((m, [c, share]) => ({ gpuSeconds: m.gpuSeconds + share * point.classes[c as ClassId]!.cost.gpuSeconds, energyJ: m.energyJ + share * point.classes[c as ClassId]!.cost.energyJ }), { gpuSeconds: 0, energyJ: 0 });
  const slotS = world.slotMs / 1000;
  const bySite: Record<string, number> = {};
  for (let k = 0; k < world.slots; k++) for (const s of world.actual(k)) bySite[s.site] = (bySite[s.site] ?? 0) + Math.min((s.spareGpus[0]! * slotS) / mix.gpuSeconds, (s.spareW[0]! * slotS) / mix.energyJ);
  return Object.fromEntries(Object.entries(bySite).map(([site, n]) => [site, Math.round(n)]));
}

/**
 * Per site, its mean intensity over the stretch and the mean weighted by the spare GPU time of
 * each slot: where the second is above the first, interactive traffic holds the site's cleaner
 * hours and batch work can only have the dirtier ones.
 */
function intensityWhereSpare(world: DeferralWorld): Record<string, { mean: number; where_spare: number }> {
  const acc = new Map<string, { sum: number; n: number; weighted: number; weight: number }>();
  for (let k = 0; k < world.slots; k++) {
    for (const s of world.actual(k)) {
      const a = acc.get(s.site) ?? acc.set(s.site, { sum: 0, n: 0, weighted: 0, weight: 0 }).get(s.site)!;
      a.sum += s.carbonGPerKwh[0]!;
      a.n++;
      a.weighted += s.carbonGPerKwh[0]! * s.spareGpus[0]!;
      a.weight += s.spareGpus[0]!;
    }
  }
  return Object.fromEntries([...acc].map(([site, a]) => [site, { mean: round(a.sum / a.n), where_spare: a.weight > 0 ? round(a.weighted / a.weight) : 0 }]));
}

function limitedS(r: FleetResult): Record<string, number> {
  return Object.fromEntries(Object.entries(r.sites).map(([s, x]) => [s, x.powerLimitedS]));
}

function round(x: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}
