import type { ClassId } from "../../schemas/ids.ts";

export interface Percentiles {
  p50: number;
  p90: number;
  p99: number;
}

export interface ClassResult {
  arrived: number;
  served: number;
  dropped: number;
  sloAttainment: number;
  ttftMs: Percentiles;
  tbtMs: Percentiles;
  e2eMs: Percentiles;
}

export interface SiteResult {
  energyKwh: number;
  carbonKg: number;
  /**
   * Energy (and its carbon) of the GPUs that instances hold, server overhead included, without the
   * idle GPUs no instance holds: what a system that releases unused servers (DynamoLLM) pays for.
   */
  instanceEnergyKwh: number;
  instanceCarbonKg: number;
  served: number;
  /** Seconds in which the site's draw had to be cut to fit its power envelope. */
  powerLimitedS: number;
}

/** Samples for plots, one every `recordEveryS`. */
export interface FleetTimeline {
  tS: number[];
  sites: Record<string, { availableW: number[]; drawW: number[]; carbonGPerKwh: number[] }>;
  servedRps: number[];
  droppedRps: number[];
}

/** Everything a fleet simulation reports; `simulated: true` always. */
export interface FleetResult {
  simulated: true;
  seed: number;
  durationS: number;
  arrived: number;
  served: number;
  dropped: number;
  /** Requests still waiting at the router when the run ended. */
  inFlight: number;
  /** Mean time served requests waited at the router for room (not in the latency percentiles, which come from the profile). */
  meanQueueWaitS: number;
  /** Requests served within their class's E2E SLO, per second of simulated time. */
  goodputRps: number;
  dropSlots: number;
  slots: number;
  ttftMs: Percentiles;
  tbtMs: Percentiles;
  e2eMs: Percentiles;
  /** E2E latency at percentiles 1, 2, ..., 99 (for a CDF plot). */
  e2eQuantilesMs: number[];
  sloAttainment: number;
  energyKwh: number;
  carbonKg: number;
  /** Summed over sites: see SiteResult. */
  instanceEnergyKwh: number;
  instanceCarbonKg: number;
  /** Jain's index over classes of each class's SLO attainment (1 = every class equally well served). */
  jain: number;
  reconfigurations: { instanceStarts: number; tpChanges: number; clockChanges: number; plans: number; corrections: number };
  classes: Record<ClassId, ClassResult>;
  sites: Record<string, SiteResult>;
  timeline: FleetTimeline;
}

/** Jain's fairness index (sum x)^2 / (n sum x^2) (Jain, Chiu and Hawe, 1984); 1 for an empty or all-zero set. */
export function jainIndex(xs: readonly number[]): number {
  const sum = xs.reduce((a, b) => a + b, 0);
  const sq = xs.reduce((a, b) => a + b * b, 0);
  return sq === 0 ? 1 : (sum * sum) / (xs.length * sq);
}

/**
 * A fleet result's totals, summed from its classes and sites as both simulators report them:
 * requests, attainment and goodput (`good`: requests served within their SLO), energy and carbon,
 * and Jain's index over the attainment of classes that had requests.
 */
export function fleetTotals(classes: Readonly<Record<string, ClassResult>>, sites: Readonly<Record<string, SiteResult>>, good: number, durationS: number) {
  const byClass = Object.values(classes);
  const bySite = Object.values(sites);
  const overClasses = (f: (c: ClassResult) => number) => byClass.reduce((s, c) => s + f(c), 0);
  const overSites = (f: (s: SiteResult) => number) => bySite.reduce((s, x) => s + f(x), 0);
  const arrived = overClasses((c) => c.arrived);
  return {
    arrived,
    served: overClasses((c) => c.served),
    dropped: overClasses((c) => c.dropped),
    goodputRps: good / durationS,
    sloAttainment: arrived > 0 ? good / arrived : 1,
    energyKwh: overSites((s) => s.energyKwh),
    carbonKg: overSites((s) => s.carbonKg),
    instanceEnergyKwh: overSites((s) => s.instanceEnergyKwh),
    instanceCarbonKg: overSites((s) => s.instanceCarbonKg),
    jain: jainIndex(byClass.filter((c) => c.arrived > 0).map((c) => c.sloAttainment)),
  };
}
