import { forkRng, seededRng } from "../../ports/rng.ts";
import type { ClassId } from "../../schemas/ids.ts";
import type { Plan } from "../../schemas/plan.ts";
import { SERVER_POWER_OVERHEAD } from "../../model/power.ts";
import { applyPlan, type AppliedPlan, type ReconfigurationCounts } from "./apply-plan.ts";
import { applyDelta } from "../../planning/apply-delta.ts";
import { drainingGroups, type DrainingGroup } from "./handover.ts";
import type { FleetSimConfig, ReconfigurationDelays } from "./fleet-types.ts";
import { FleetMetrics } from "./fleet-metrics.ts";
import type { FleetResult } from "./fleet-result.ts";
import type { InstanceGroup } from "./instance-group.ts";
import { poissonCount } from "./poisson-count.ts";
import { ClassBacklog } from "./class-backlog.ts";
import { planningContextAt } from "./planning-context.ts";
import { ProfileIndex } from "./profile-index.ts";
import { assertCovers, valueAt } from "./time-series.ts";

export const DEFAULT_RECONFIGURATION: ReconfigurationDelays = { startS: 60, tpChangeS: 90, clockChangeS: 1 };

/**
 * Time-stepped fleet simulation (1 s steps by default). Every step, each class's arrivals (Poisson
 * around the workload's rate) join its router queue and are split over the plan's routing targets
 * by weight, skipping full instances as the edge router skips saturated ones (`fillByWeight`); an
 * instance serves what fits its capacity at its TP and clock (from the profile table) and the rest
 * waits, up to `maxQueueS`, then is dropped; instances still reconfiguring take nothing. Each site's draw (instances at
 * their load, idle GPUs at idle, times the server overhead) must fit its power envelope: when it
 * does not, the site's served load is cut until it fits and the cut is dropped. The planner runs
 * at its cadence; the first plan applies at once (the fleet starts warm), later ones with
 * reconfiguration delays. With `makeBeforeBreak` (the default, as the host agent applies plans),
 * instances a plan removes keep running until the new instances for their classes are ready (see
 * `drainingGroups`), and a class whose planned instances are all starting is served by what runs
 * at their sites, except work that can wait (`deferrable`), which waits for its own instances
 * (and whose instances stand in for nothing else).
 * Deterministic for a seed.
 */
export function simulateFleet(cfg: FleetSimConfig, onProgress?: (doneS: number, totalS: number) => void): FleetResult {
  const stepS = cfg.stepS ?? 1;
  const overhead = cfg.serverOverhead ?? SERVER_POWER_OVERHEAD;
  const delays = cfg.reconfiguration ?? DEFAULT_RECONFIGURATION;
  const classes = cfg.workload.classes;
  for (const site of cfg.sites) {
    assertCovers(site.power, 0, cfg.durationS);
    assertCovers(site.carbon, 0, cfg.durationS);
  }
  const arrivalsRng = forkRng(seededRng(cfg.seed), 1);
  // Work that can wait draws from its own stream: adding it leaves the other classes' arrivals as they were.
  const deferrableRng = forkRng(seededRng(cfg.seed), 2);
  const profile = new ProfileIndex(cfg.profile);
  const metrics = new FleetMetrics(cfg, classes);
  const counts: ReconfigurationCounts = { instanceStarts: 0, tpChanges: 0, clockChanges: 0 };
  let plan: Plan | undefined;
  let plans = 0;
  let applied: AppliedPlan = { records: new Map(), groups: [], routes: new Map() };
  let draining: DrainingGroup[] = [];
  let nextPlanS = 0;
  let nextCorrectionS = Infinity;
  let corrections = 0;
  const bySite = new Map<string, InstanceGroup[]>();
  const deferrable = new Set<ClassId>(cfg.deferrable?.classes ?? []);
  const waitS = (c: ClassId) => (deferrable.has(c) ? cfg.deferrable!.maxQueueS : (cfg.maxQueueS ?? 5));
  const backlogs = new Map(classes.map((c) => [c, new ClassBacklog(Math.floor(waitS(c) / stepS))]));

  for (let t = 0; t < cfg.durationS; t += stepS) {
    if (t >= nextPlanS) {
      install(cfg.planner.plan(planningContextAt(cfg, t, stepS, plan)), t, plans === 0);
      plans++;
      nextPlanS += cfg.planner.cadenceS;
      if (cfg.corrector) nextCorrectionS = t + cfg.corrector.cadenceS;
    } else if (t >= nextCorrectionS && cfg.corrector && plan) {
      const delta = cfg.corrector.correct({ ...planningContextAt(cfg, t, stepS, plan, t), current: plan });
      if (delta) {
        install(applyDelta(plan, delta), t, false);
        corrections++;
      }
      nextCorrectionS += cfg.corrector.cadenceS;
    }
    if (draining.some((d) => d.untilS <= t)) {
      metrics.foldLatency(draining.filter((d) => d.untilS <= t).map((d) => d.group));
      draining = draining.filter((d) => d.untilS > t);
      indexBySite();
    }
    for (const g of running()) g.load.clear();
    for (const c of classes) route(c, t);
    for (const site of cfg.sites) powerSite(site, t);
    metrics.endStep(t, stepS, running());
    onProgress?.(t + stepS, cfg.durationS);
  }
  metrics.foldLatency(running());
  let inQueue = 0;
  let waitedS = 0;
  for (const b of backlogs.values()) {
    inQueue += b.size;
    waitedS += b.waitedSteps * stepS;
  }
  return metrics.result({ ...counts, plans, corrections }, { inQueue, waitedS });

  function install(next: Plan, t: number, warm: boolean): void {
    metrics.foldLatency(applied.groups);
    plan = next;
    const previous = applied.records;
    applied = applyPlan(next, previous, cfg.sites, profile, t, delays, counts, warm);
    const stillDraining = draining;
    draining = warm || cfg.makeBeforeBreak === false ? [] : drainingGroups(previous, applied.records, applied.groups, stillDraining, cfg.sites, profile, t);
    const stopped = stillDraining.filter((d) => !draining.includes(d)).map((d) => d.group);
    metrics.foldLatency(stopped);
    indexBySite();
  }

  /**
   * While every instance planned for class `c` is starting, whatever runs at their sites stands in
   * for it (as the site gateway does mid-change), in proportion to the room each has for `c`.
   */
  function standIns(c: ClassId, planned: ReadonlyArray<{ group: InstanceGroup }>, t: number): Array<{ group: InstanceGroup; weight: number }> {
    const sites = new Set(planned.map((x) => x.group.siteId));
    const out: Array<{ group: InstanceGroup; weight: number }> = [];
    for (const group of running()) {
      if (group.readyAtS > t || !sites.has(group.siteId) || servesOnlyDeferrable(group)) continue;
      group.serveAlso(c);
      const room = group.headroomRps(c);
      if (room > 0) out.push({ group, weight: room });
    }
    return out;
  }

  /** A batch instance: it runs work that can wait and stands in for nothing else (the site runs interactive work only on its own instances). */
  function servesOnlyDeferrable(group: InstanceGroup): boolean {
    if (deferrable.size === 0) return false;
    const served = [...group.curves.keys()];
    return served.length > 0 && served.every((c) => deferrable.has(c));
  }

  /** The plan's instances and those still draining from earlier plans. */
  function running(): InstanceGroup[] {
    return draining.length === 0 ? applied.groups : [...applied.groups, ...draining.map((d) => d.group)];
  }

  function indexBySite(): void {
    bySite.clear();
    for (const g of running()) (bySite.get(g.siteId) ?? bySite.set(g.siteId, []).get(g.siteId)!).push(g);
  }

  function route(c: ClassId, t: number): void {
    const arrived = poissonCount(deferrable.has(c) ? deferrableRng : arrivalsRng, cfg.workload.rateRps(t, c) * stepS);
    metrics.arrive(c, arrived, t);
    const backlog = backlogs.get(c)!;
    backlog.arrive(arrived);
    const waiting = backlog.size;
    if (waiting > 0) {
      let targets = applied.routes.get(c) ?? [];
      if (cfg.makeBeforeBreak !== false && !deferrable.has(c) && targets.length > 0 && targets.every((x) => x.group.readyAtS > t)) targets = standIns(c, targets, t);
      backlog.take(fillByWeight(c, targets.filter((x) => x.group.readyAtS <= t), waiting / stepS) * stepS);
    }
    metrics.drop(c, backlog.age(), t);
  }

  /**
   * Sends `rps` of class `c` over `targets` as the edge router does: by weight among the
   * instances that have room (a saturated one is skipped, its share going to the others), until
   * the rps is placed or every instance is full. Returns what was placed (req/s).
   */
  function fillByWeight(c: ClassId, targets: ReadonlyArray<{ group: InstanceGroup; weight: number }>, rps: number): number {
    let placed = 0;
    let open = targets.filter((x) => x.weight > 0 && x.group.headroomRps(c) > 1e-12);
    while (rps - placed > 1e-9 && open.length > 0) {
      const totalWeight = open.reduce((sum, x) => sum + x.weight, 0);
      const left = rps - placed;
      for (const { group, weight } of open) {
        const take = Math.min(left * (weight / totalWeight), group.headroomRps(c));
        group.load.set(c, (group.load.get(c) ?? 0) + take);
        placed += take;
      }
      open = open.filter((x) => x.group.headroomRps(c) > 1e-12);
    }
    return placed;
  }

  function powerSite(site: FleetSimConfig["sites"][number], t: number): void {
    const running = bySite.get(site.id) ?? [];
    const usedGpus = running.reduce((s, g) => s + g.gpus, 0);
    const idleGpusW = Math.max(0, site.gpus - usedGpus) * site.gpu.power.idleW;
    const floorW = (idleGpusW + running.reduce((s, i) => s + i.idleW, 0)) * overhead;
    let drawW = (idleGpusW + running.reduce((s, i) => s + i.powerW(), 0)) * overhead;
    const availableW = valueAt(site.power, t);
    let limited = false;
    if (drawW > availableW) {
      // Cut every instance's load by the same factor: draw above the idle floor is about linear in load.
      const keep = drawW > floorW ? Math.max(0, (availableW - floorW) / (drawW - floorW)) : 0;
      for (const inst of running) {
        for (const [c, l] of inst.load) {
          metrics.drop(c, l * (1 - keep) * stepS, t);
          inst.load.set(c, l * keep);
        }
      }
      drawW = Math.min(drawW, Math.max(availableW, 0));
      limited = true;
    }
    // The site's draw less the GPUs no instance holds.
    const instancesW = Math.max(0, drawW - idleGpusW * overhead);
    metrics.sitePower(site.id, t, stepS, { drawW, availableW, instancesW }, valueAt(site.carbon, t), limited);
  }
}
