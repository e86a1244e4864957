import type { RequestOutcome } from "../../engine/engine-instance.ts";
import type { ClassId } from "../../schemas/ids.ts";
import type { Slo } from "../../schemas/request-class.ts";
import { linearPercentile, sortedAscending } from "../../stats/percentile.ts";
import { fleetTotals, type ClassResult, type FleetResult, type Percentiles, type SiteResult } from "../fleet/fleet-result.ts";
import { TimelineRecorder } from "../fleet/timeline-recorder.ts";
import type { FleetSimConfig } from "../fleet/fleet-types.ts";
import type { FleetRequest } from "./fleet-requests.ts";

/**
 * What the per-request driver counts, reported in the fluid simulator's shape. Latencies are each
 * request's own (TTFT, mean TBT, E2E from its arrival at the edge, site queue included), so
 * percentiles are tails over requests; a request is within its SLO when its E2E is (where the
 * class has an E2E objective), else when both its TTFT and its mean TBT are. Dropped requests
 * count as misses.
 */
export class RequestMetrics {
  private readonly served: Uint8Array;
  private readonly dropped = new Map<ClassId, number>();
  private readonly arrived = new Map<ClassId, number>();
  private readonly sites = new Map<string, SiteResult>();
  private readonly slotsWithDrops = new Set<number>();
  private readonly timeline: TimelineRecorder;
  private queueWaitS = 0;
  private readonly slotS: number;
  private readonly recordEveryS: number;

  constructor(
    private readonly cfg: FleetSimConfig,
    private readonly requests: readonly FleetRequest[],
    private readonly outcomes: readonly RequestOutcome[],
  ) {
    this.served = new Uint8Array(requests.length);
    this.slotS = cfg.slotS ?? 900;
    this.recordEveryS = cfg.recordEveryS ?? 60;
    for (const c of cfg.workload.classes) {
      this.dropped.set(c, 0);
      this.arrived.set(c, 0);
    }
    for (const s of cfg.sites) this.sites.set(s.id, { energyKwh: 0, carbonKg: 0, instanceEnergyKwh: 0, instanceCarbonKg: 0, served: 0, powerLimitedS: 0 });
    this.timeline = new TimelineRecorder(cfg.sites.map((s) => s.id));
  }

  /** Requests served or dropped so far. */
  settled = 0;

  arrive(index: number): void {
    const c = this.requests[index]!.classId;
    this.arrived.set(c, (this.arrived.get(c) ?? 0) + 1);
  }

  drop(index: number, tS: number): void {
    const c = this.requests[index]!.classId;
    this.dropped.set(c, (this.dropped.get(c) ?? 0) + 1);
    this.settled++;
    this.slotsWithDrops.add(Math.floor(tS / this.slotS));
    this.timeline.dropped(1);
  }

  /** A request finished on a replica at `siteId`, after waiting `queuedS` in the site queue. */
  serve(index: number, siteId: string, queuedS: number): void {
    this.served[index] = 1;
    this.settled++;
    this.sites.get(siteId)!.served++;
    this.timeline.served(1);
    this.queueWaitS += queuedS;
  }

  /** One second of a site's draw (W, all of it and its instances' part) against what it had. */
  sitePower(siteId: string, { drawW, availableW, instancesW }: { drawW: number; availableW: number; instancesW: number }, carbonGPerKwh: number, limited: boolean): void {
    const s = this.sites.get(siteId)!;
    const kwh = drawW / 3.6e6;
    const instanceKwh = instancesW / 3.6e6;
    s.energyKwh += kwh;
    s.carbonKg += (kwh * carbonGPerKwh) / 1000;
    s.instanceEnergyKwh += instanceKwh;
    s.instanceCarbonKg += (instanceKwh * carbonGPerKwh) / 1000;
    if (limited) s.powerLimitedS += 1;
    this.timeline.site(siteId, drawW, availableW, carbonGPerKwh);
  }

  /** Closes second `tS - 1 .. tS`; records a timeline sample every `recordEveryS`. */
  endSecond(tS: number): void {
    this.timeline.endSample();
    if (tS % this.recordEveryS === 0) this.timeline.record(tS);
  }

  result(reconfigurations: FleetResult["reconfigurations"], inFlight: number): FleetResult {
    const all = { ttft: [] as number[], tbt: [] as number[], e2e: [] as number[] };
    const perClass = new Map<ClassId, { ttft: number[]; tbt: number[]; e2e: number[]; served: number; good: number }>(this.cfg.workload.classes.map((c) => [c, { ttft: [], tbt: [], e2e: [], served: 0, good: 0 }]));
    this.requests.forEach((r, i) => {
      if (!this.served[i]) return;
      const o = this.outcomes[i]!;
      const k = perClass.get(r.classId)!;
      const [ttft, tbt, e2e] = [o.ttftS * 1e3, o.meanTbtS * 1e3, o.e2eS * 1e3];
      k.served++;
      k.ttft.push(ttft);
      k.e2e.push(e2e);
      all.ttft.push(ttft);
      all.e2e.push(e2e);
      if (Number.isFinite(tbt)) {
        k.tbt.push(tbt);
        all.tbt.push(tbt);
      }
      if (withinSlo(this.cfg.slo[r.classId], ttft, tbt, e2e)) k.good++;
    });
    const classes: Record<string, ClassResult> = {};
    let good = 0;
    for (const [c, k] of perClass) {
      const a = this.arrived.get(c) ?? 0;
      classes[c] = { arrived: a, served: k.served, dropped: this.dropped.get(c) ?? 0, sloAttainment: a > 0 ? k.good / a : 1, ttftMs: percentiles(k.ttft), tbtMs: percentiles(k.tbt), e2eMs: percentiles(k.e2e) };
      good += k.good;
    }
    const sortedE2e = sortedAscending(all.e2e);
    const sites = Object.fromEntries(this.sites);
    const totals = fleetTotals(classes, sites, good, this.cfg.durationS);
    return {
      simulated: true,
      seed: this.cfg.seed,
      durationS: this.cfg.durationS,
      ...totals,
      inFlight,
      meanQueueWaitS: totals.served > 0 ? this.queueWaitS / totals.served : 0,
      dropSlots: this.slotsWithDrops.size,
      slots: Math.ceil(this.cfg.durationS / this.slotS),
      ttftMs: percentiles(all.ttft),
      tbtMs: percentiles(all.tbt),
      e2eMs: percentiles(all.e2e),
      e2eQuantilesMs: Array.from({ length: 99 }, (_, i) => at(sortedE2e, i + 1)),
      reconfigurations,
      classes,
      sites,
      timeline: this.timeline.timeline,
    };
  }
}

function withinSlo(slo: Slo | undefined, ttftMs: number, tbtMs: number, e2eMs: number): boolean {
  if (!slo) return true;
  if (slo.e2eMs !== undefined) return e2eMs <= slo.e2eMs;
  return ttftMs <= slo.ttftMs && (!Number.isFinite(tbtMs) || tbtMs <= slo.tbtMs);
}

function percentiles(xs: readonly number[]): Percentiles {
  const s = sortedAscending(xs);
  return { p50: at(s, 50), p90: at(s, 90), p99: at(s, 99) };
}

function at(sorted: readonly number[], p: number): number {
  return sorted.length === 0 ? 0 : linearPercentile(sorted, p);
}
