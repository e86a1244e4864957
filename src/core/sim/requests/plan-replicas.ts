import { mainClass } from "../../planning/plan-reading.ts";
import type { ClassId } from "../../schemas/ids.ts";
import type { ClockSetting, Plan, SitePlan } from "../../schemas/plan.ts";
import { clockOf, type ReconfigurationCounts } from "../fleet/apply-plan.ts";
import type { FleetSite, ReconfigurationDelays } from "../fleet/fleet-types.ts";
import type { ProfileIndex } from "../fleet/profile-index.ts";
import type { EngineConfig } from "../../engine/engine-instance.ts";
import type { Replica } from "./replica.ts";

/** A plan entry as it runs: its replicas and the classes the plan routes to it. */
export interface RunningEntry {
  key: string;
  siteId: string;
  model: string;
  tp: number;
  /** The clock it runs at: the planned one, or for a clock policy the top profiled clock within its bounds. */
  mhz: number;
  /** The plan's clock setting (a site runs a policy within its bounds). */
  clock: ClockSetting;
  /** The class the plan gives it the most load of. */
  mainClass: ClassId | undefined;
  /** The classes the plan routes to it (a site's clock policy keeps the tightest of their SLOs). */
  classes: readonly ClassId[];
  replicas: Replica[];
}

/** Makes a replica of an entry, up at `readyAtS`, its engine starting at `nowS`. */
export type ReplicaFactory = (site: FleetSite, entry: Omit<RunningEntry, "siteId" | "replicas">, readyAtS: number, nowS: number) => Replica;

/** What a kept replica's engine is given when its entry's clock changes (default: the entry's clock, locked). */
export type EngineClockOf = (site: FleetSite, entry: Omit<RunningEntry, "siteId" | "replicas">) => EngineConfig["clock"];

/**
 * A plan applied to engine replicas, as the fluid simulator's `applyPlan` applies it to instance
 * groups: an entry that keeps its TP keeps its replicas (a new clock is locked on them; the engine
 * stalls for the switch), added replicas start after `startS`, fewer replicas stop the newest,
 * and a TP change restarts the entry after `tpChangeS`. Replicas a plan removes or re-shards stop
 * taking requests, with make-before-break: while the site has GPUs to spare beside the new plan's,
 * they keep taking requests as stand-ins until the new plan's replicas for their classes are up
 * (`drainingGroups`' rule). A stopped replica finishes what it holds, then gives its GPUs back.
 * The first plan of a run (`warm`) is up at once.
 */
export class PlanReplicas {
  entries = new Map<string, RunningEntry>();
  /** Live replicas per site: the plan's, those handing over, and stopped ones still finishing. */
  readonly bySite = new Map<string, Replica[]>();
  /** Per site and class, the entries the plan routes the class to there (the gateway's stand-ins for a starting instance). */
  classEntries = new Map<string, Map<ClassId, RunningEntry[]>>();
  /** Per site, how the plan asks its gateway to queue (absent: the site's own, FIFO) and balance (absent: as-routed) requests. */
  gateway = new Map<string, Pick<SitePlan, "queue" | "balance">>();
  /** The replicas of the plan's entries (the others at a site are handing over or finishing). */
  private planned = new Set<Replica>();

  constructor(
    private readonly sites: readonly FleetSite[],
    private readonly profile: ProfileIndex,
    private readonly delays: ReconfigurationDelays,
    private readonly counts: ReconfigurationCounts,
    private readonly makeReplica: ReplicaFactory,
    private readonly makeBeforeBreak: boolean,
    private readonly engineClock: EngineClockOf = (_site, entry) => entry.mhz,
  ) {
    for (const s of sites) this.bySite.set(s.id, []);
  }

  install(plan: Plan, t: number, warm: boolean): void {
    this.gateway = new Map(plan.sites.map((s) => [s.site as string, { queue: s.queue, balance: s.balance }]));
    const servedBy = new Map<string, Set<ClassId>>();
    for (const [c, targets] of Object.entries(plan.routing) as [ClassId, Plan["routing"][ClassId]][]) {
      for (const target of targets ?? []) {
        const key = `${target.site}/${target.instance}`;
        if (target.weight > 0) (servedBy.get(key) ?? servedBy.set(key, new Set()).get(key)!).add(c);
      }
    }
    const next = new Map<string, RunningEntry>();
    const handedOver: Replica[] = [];
    for (const sitePlan of plan.sites) {
      const site = this.sites.find((s) => s.id === sitePlan.site);
      if (!site) throw new Error(`plan v${plan.version} names unknown site "${sitePlan.site}"`);
      for (const planned of sitePlan.instances) {
        const key = `${site.id}/${planned.id}`;
        const classes = [...(servedBy.get(key) ?? [])].sort();
        const entry = { key, siteId: site.id, model: planned.model, tp: planned.tp, mhz: clockOf(planned, site, this.profile, classes), clock: planned.clock, mainClass: mainClass(planned.loadRps), classes };
        const old = this.entries.get(key);
        const n = planned.replicas;
        const make = (count: number, readyAtS: number) => Array.from({ length: count }, () => this.add(site, entry, readyAtS, t));
        let replicas: Replica[];
        if (warm) replicas = make(n, t);
        else if (!old) {
          this.counts.instanceStarts += n;
          replicas = make(n, t + this.delays.startS);
        } else if (old.tp !== planned.tp) {
          this.counts.tpChanges += n;
          handedOver.push(...old.replicas);
          replicas = make(n, t + this.delays.tpChangeS);
        } else {
          const kept = [...old.replicas].sort((a, b) => a.readyAtS - b.readyAtS || a.id - b.id);
          const retuned = !sameClock(old.clock, entry.clock) || old.mhz !== entry.mhz;
          if (old.mhz !== entry.mhz) this.counts.clockChanges += Math.min(n, kept.length);
          for (const r of kept.slice(n)) r.stopAtS = Math.min(r.stopAtS, t);
          replicas = kept.slice(0, n);
          for (const r of replicas) {
            if (retuned) r.setClock(entry.mhz, this.engineClock(site, entry));
            r.classes = classes;
          }
          if (n > replicas.length) {
            this.counts.instanceStarts += n - replicas.length;
            replicas.push(...make(n - replicas.length, t + this.delays.startS));
          }
        }
        next.set(key, { ...entry, replicas });
      }
    }
    for (const [key, old] of this.entries) if (!next.has(key)) handedOver.push(...old.replicas);
    this.entries = next;
    this.planned = new Set([...next.values()].flatMap((e) => e.replicas));
    this.handOver(handedOver, t, warm);
    this.classEntries = new Map(this.sites.map((s) => [s.id, new Map()]));
    for (const e of next.values()) for (const c of e.classes) (this.classEntries.get(e.siteId)!.get(c) ?? this.classEntries.get(e.siteId)!.set(c, []).get(c)!).push(e);
  }

  /**
   * Replicas of `model` at the site that an earlier plan ran and that still take requests at `t`:
   * kept until the new plan's replicas for their classes are up (make-before-break).
   */
  handoverReplicas(siteId: string, model: string, t: number): Replica[] {
    return this.bySite.get(siteId)!.filter((r) => r.model === model && !this.planned.has(r) && r.accepting(t));
  }

  /** True while some replica of the entry is still on its way up. */
  static awaited(entry: RunningEntry, t: number): boolean {
    return entry.replicas.some((r) => r.readyAtS > t && r.stopAtS > t);
  }

  /** Replicas that stopped and hold no request: retired at `t` (their engines idle up to then). Returns them. */
  retire(t: number): Replica[] {
    const out: Replica[] = [];
    for (const [siteId, list] of this.bySite) {
      const done = list.filter((r) => r.stopAtS <= t && r.inFlight === 0 && r.engine.nextEventS() === Infinity);
      if (done.length === 0) continue;
      for (const r of done) r.retiredAtS = t;
      out.push(...done);
      this.bySite.set(siteId, list.filter((r) => r.retiredAtS === undefined));
    }
    return out;
  }

  private add(site: FleetSite, entry: Parameters<ReplicaFactory>[1], readyAtS: number, t: number): Replica {
    const r = this.makeReplica(site, entry, readyAtS, t);
    this.bySite.get(site.id)!.push(r);
    return r;
  }

  /**
   * Replicas the new plan removes or re-shards: up ones keep taking requests until the new plan's
   * replicas for their classes are up, where the site has GPUs for them beside the new plan's
   * (those still handing over from an earlier change first); the others stop now.
   */
  private handOver(replicas: readonly Replica[], t: number, warm: boolean): void {
    const free = new Map<string, number>(this.sites.map((s) => [s.id, s.gpus]));
    for (const e of this.entries.values()) for (const r of e.replicas) free.set(r.siteId, free.get(r.siteId)! - r.tp);
    for (const list of this.bySite.values()) {
      for (const r of list) {
        if (this.planned.has(r) || replicas.includes(r) || r.stopAtS <= t) continue;
        if (r.tp <= free.get(r.siteId)!) free.set(r.siteId, free.get(r.siteId)! - r.tp);
        else r.stopAtS = t;
      }
    }
    for (const r of replicas) {
      if (warm || !this.makeBeforeBreak || !r.accepting(t)) {
        r.stopAtS = Math.min(r.stopAtS, t);
        continue;
      }
      const successors = [...this.entries.values()].filter((e) => e.classes.some((c) => r.classes.includes(c))).flatMap((e) => e.replicas);
      const untilS = Math.max(t, ...successors.map((s) => s.readyAtS));
      if (untilS > t && r.tp <= free.get(r.siteId)!) {
        free.set(r.siteId, free.get(r.siteId)! - r.tp);
        r.stopAtS = untilS;
      } else r.stopAtS = t;
    }
  }
}

function sameClock(a: ClockSetting, b: ClockSetting): boolean {
  if (a.mode === "locked") return b.mode === "locked" && a.mhz === b.mhz;
  return b.mode === "policy" && a.policy === b.policy && a.minMhz === b.minMhz && a.maxMhz === b.maxMhz;
}
