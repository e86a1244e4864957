import type { ClassId } from "../../schemas/ids.ts";
import type { Slo } from "../../schemas/request-class.ts";
import { LatencyAccumulator } from "./latency-accumulator.ts";
import type { FleetSimConfig } from "./fleet-types.ts";
import { fleetTotals, type ClassResult, type FleetResult, type Percentiles, type SiteResult } from "./fleet-result.ts";
import { TimelineRecorder } from "./timeline-recorder.ts";
import type { InstanceGroup } from "./instance-group.ts";

/** Utilisation bins per (instance, class): served requests are counted per bin, latency read per bin. */
const UTILISATION_BINS = 20;

interface ClassTally {
  arrived: number;
  dropped: number;
  served: number;
  ttft: LatencyAccumulator;
  tbt: LatencyAccumulator;
  e2e: LatencyAccumulator;
}

/**
 * Everything the fleet simulator counts. Latency is not tracked per request: each instance counts
 * the requests it served per class at each utilisation (binned), and when a plan ends those counts
 * are turned into latency from the profile at the bin's utilisation.
 */
export class FleetMetrics {
  private readonly tallies = new Map<ClassId, ClassTally>();
  private readonly sites = new Map<string, SiteResult>();
  private readonly bins = new Map<InstanceGroup, Map<ClassId, Float64Array>>();
  private readonly slotsWithDrops = new Set<number>();
  private readonly timeline: TimelineRecorder;
  private readonly slotS: number;
  private readonly recordEveryS: number;

  constructor(
    private readonly cfg: FleetSimConfig,
    private readonly classes: readonly ClassId[],
  ) {
    this.slotS = cfg.slotS ?? 900;
    this.recordEveryS = cfg.recordEveryS ?? 60;
    for (const c of classes) this.tallies.set(c, { arrived: 0, dropped: 0, served: 0, ttft: new LatencyAccumulator(), tbt: new LatencyAccumulator(), e2e: new LatencyAccumulator() });
    for (const s of cfg.sites) this.sites.set(s.id, { energyKwh: 0, carbonKg: 0, instanceEnergyKwh: 0, instanceCarbonKg: 0, served: 0, powerLimitedS: 0 });
    this.timeline = new TimelineRecorder(cfg.sites.map((s) => s.id));
  }

  arrive(c: ClassId, n: number, _t: number): void {
    this.tallies.get(c)!.arrived += n;
  }

  drop(c: ClassId, n: number, t: number): void {
    if (n <= 1e-9) return;
    this.tallies.get(c)!.dropped += n;
    this.slotsWithDrops.add(Math.floor(t / this.slotS));
    this.timeline.dropped(n);
  }

  sitePower(siteId: string, _t: number, stepS: number, { drawW, availableW, instancesW }: { drawW: number; availableW: number; instancesW: number }, carbonGPerKwh: number, limited: boolean): void {
    const s = this.sites.get(siteId)!;
    const kwh = (drawW * stepS) / 3.6e6;
    const instanceKwh = (instancesW * stepS) / 3.6e6;
    s.energyKwh += kwh;
    s.carbonKg += (kwh * carbonGPerKwh) / 1000;
    s.instanceEnergyKwh += instanceKwh;
    s.instanceCarbonKg += (instanceKwh * carbonGPerKwh) / 1000;
    if (limited) s.powerLimitedS += stepS;
    this.timeline.site(siteId, drawW, availableW, carbonGPerKwh);
  }

  /** Counts what each instance served this step, and records the timeline. */
  endStep(t: number, stepS: number, instances: Iterable<InstanceGroup>): void {
    for (const inst of instances) {
      const u = Math.min(UTILISATION_BINS - 1, Math.floor(inst.utilisation() * UTILISATION_BINS));
      for (const [c, l] of inst.load) {
        if (l <= 0) continue;
        const n = l * stepS;
        this.tallies.get(c)!.served += n;
        this.sites.get(inst.siteId)!.served += n;
        this.timeline.served(n);
        let perClass = this.bins.get(inst);
        if (!perClass) this.bins.set(inst, (perClass = new Map()));
        let bins = perClass.get(c);
        if (!bins) perClass.set(c, (bins = new Float64Array(UTILISATION_BINS)));
        bins[u]! += n;
      }
    }
    this.timeline.endSample();
    if ((t + stepS) % this.recordEveryS < stepS) this.timeline.record(t + stepS, this.recordEveryS);
  }

  /** Turns the served counts of the instances of the plan that just ended into latency. */
  foldLatency(instances: Iterable<InstanceGroup>): void {
    for (const inst of instances) {
      const perClass = this.bins.get(inst);
      if (!perClass) continue;
      for (const [c, bins] of perClass) {
        const tally = this.tallies.get(c)!;
        const slo: Slo | undefined = this.cfg.slo[c];
        const curve = inst.curves.get(c);
        if (!curve || curve.points.length === 0) continue;
        bins.forEach((n, b) => {
          if (n <= 0) return;
          const lat = inst.latencyAt(c, (b + 0.5) / UTILISATION_BINS);
          tally.ttft.add(n, lat.ttftMs, slo?.ttftMs);
          tally.tbt.add(n, lat.tbtMs, slo?.tbtMs);
          tally.e2e.add(n, lat.e2eMs, slo?.e2eMs);
        });
      }
      this.bins.delete(inst);
    }
  }

  result(reconfigurations: FleetResult["reconfigurations"], queue: { inQueue: number; waitedS: number }): FleetResult {
    const pct = (acc: LatencyAccumulator): Percentiles => {
      const [p50, p90, p99] = acc.percentiles([50, 90, 99]);
      return { p50: p50!, p90: p90!, p99: p99! };
    };
    const merged = { ttft: new LatencyAccumulator(), tbt: new LatencyAccumulator(), e2e: new LatencyAccumulator() };
    const classes: Record<string, ClassResult> = {};
    let good = 0;
    for (const c of this.classes) {
      const t = this.tallies.get(c)!;
      for (const k of ["ttft", "tbt", "e2e"] as const) merged[k].merge(t[k]);
      const within = this.withinSlo(c, t);
      good += within;
      classes[c] = { arrived: t.arrived, served: t.served, dropped: t.dropped, sloAttainment: t.arrived > 0 ? within / t.arrived : 1, ttftMs: pct(t.ttft), tbtMs: pct(t.tbt), e2eMs: pct(t.e2e) };
    }
    const sites = Object.fromEntries(this.sites);
    const totals = fleetTotals(classes, sites, good, this.cfg.durationS);
    return {
      simulated: true,
      seed: this.cfg.seed,
      durationS: this.cfg.durationS,
      ...totals,
      inFlight: queue.inQueue,
      meanQueueWaitS: totals.served > 0 ? queue.waitedS / totals.served : 0,
      dropSlots: this.slotsWithDrops.size,
      slots: Math.ceil(this.cfg.durationS / this.slotS),
      ttftMs: pct(merged.ttft),
      tbtMs: pct(merged.tbt),
      e2eMs: pct(merged.e2e),
      e2eQuantilesMs: merged.e2e.percentiles(Array.from({ length: 99 }, (_, i) => i + 1)),
      reconfigurations,
      classes,
      sites,
      timeline: this.timeline.timeline,
    };
  }

  /**
   * Requests of a class served within its SLO: by the E2E objective where the class has one,
   * otherwise the tighter of the TTFT and TBT attainments (the two are not independent; the lower
   * one is the conservative reading). Dropped requests count as misses.
   */
  private withinSlo(c: ClassId, t: ClassTally): number {
    if (this.cfg.slo[c]?.e2eMs !== undefined) return t.e2e.countWithinSlo;
    if (!this.cfg.slo[c]) return t.served;
    return Math.min(t.ttft.countWithinSlo, t.tbt.countWithinSlo);
  }
}
