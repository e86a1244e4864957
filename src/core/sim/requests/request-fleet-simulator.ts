import { EngineInstance } from "../../engine/engine-instance.ts";
import { emptyOutcomes } from "../../engine/engine-simulator.ts";
import { kvCapacityTokens } from "../../engine/kv-capacity.ts";
import { MinHeap } from "../../engine/min-heap.ts";
import type { LlmSpec } from "../../model/llm-specs.ts";
import { SERVER_POWER_OVERHEAD } from "../../model/power.ts";
import { applyDelta } from "../../planning/apply-delta.ts";
import { ecoFreqClock } from "../../planning/greenserve/eco-clock.ts";
import { EcoFreqModels } from "../../planning/greenserve/eco-freq-models.ts";
import { tightestSlo } from "../../planning/slo.ts";
import { forkRng, seededRng } from "../../ports/rng.ts";
import { Router } from "../../routing/router.ts";
import type { SiteStatus } from "../../routing/site-status.ts";
import { isolatedServiceMs } from "../../scheduling/service-time.ts";
import type { Plan } from "../../schemas/plan.ts";
import type { ClassScheme } from "../../schemas/request-class.ts";
import type { ReconfigurationCounts } from "../fleet/apply-plan.ts";
import { DEFAULT_RECONFIGURATION } from "../fleet/fleet-simulator.ts";
import type { FleetResult } from "../fleet/fleet-result.ts";
import { ENGINE_CLOCK_SWITCH_MS, type FleetSimConfig } from "../fleet/fleet-types.ts";
import { planningContextAt } from "../fleet/planning-context.ts";
import { ProfileIndex } from "../fleet/profile-index.ts";
import { assertCovers, valueAt } from "../fleet/time-series.ts";
import type { FleetRequest } from "./fleet-requests.ts";
import { PlanReplicas, type EngineClockOf, type ReplicaFactory } from "./plan-replicas.ts";
import { planSnapshot } from "./plan-snapshot.ts";
import { PowerGovernor } from "./power-governor.ts";
import { Replica } from "./replica.ts";
import { RequestMetrics } from "./request-metrics.ts";
import { SimSiteGateway, type SimGatewayOptions } from "./sim-site-gateway.ts";
import { siteHeartbeat } from "./site-heartbeat.ts";
import { DEFAULT_REPLICA_CONCURRENCY } from "../../scheduling/replica-concurrency.ts";

export interface RequestFleetConfig extends FleetSimConfig {
  /** The requests, sorted by arrival; those arriving at or after `durationS` are left out. */
  requests: readonly FleetRequest[];
  /** The scheme the edge classifies by (its class bins drive overflow). */
  scheme: ClassScheme;
  /** The model every replica runs, as the engine model knows it. */
  llm: LlmSpec;
  /** The site gateways' limits (defaults: the agent's 64 per replica and 1024 queued; the wait is `maxQueueS`). */
  gateway?: Partial<SimGatewayOptions>;
  /** Seconds between a site's heartbeats: what routing knows of saturation and readiness is this old at most (default 5, the agent's). */
  heartbeatS?: number;
}

/**
 * The fleet run per request: the same sites, workload, planner and corrector as `simulateFleet`,
 * but every request goes through the edge's router (`Router`: SWRR on the plan's weights,
 * overflow to larger pools when an instance is saturated, failover) to a site gateway (replica
 * turns, the site queue) and into one iteration-level engine instance per planned replica
 * (`EngineInstance`: continuous batching of mixed classes, KV capacity, prefill stalls), so
 * queueing, batching interference and head-of-line blocking are simulated. An instance the plan
 * gives EcoFreq bounds runs EcoFreq per iteration within them (Algorithm 1 with EcoPred, for its
 * main class's SLO), as a site agent's simulated engine does. Plans and corrections
 * apply to the replicas as the fluid simulator applies them (`PlanReplicas`); a site over its
 * power envelope takes fewer requests (`PowerGovernor`). Energy is each engine's (iterations at
 * their clock, idle gaps at idle power) plus the GPUs no replica holds at idle, times the server
 * overhead, up to `durationS`; requests in flight then run to completion. Event-driven: arrivals,
 * engine iterations and one tick a second (planning, heartbeats, power, the queue's timeouts).
 * Deterministic for a seed. Returns the fluid simulator's result shape.
 */
export function simulateRequestFleet(cfg: RequestFleetConfig, onProgress?: (doneS: number, totalS: number) => void): FleetResult {
  for (const site of cfg.sites) {
    assertCovers(site.power, 0, cfg.durationS);
    assertCovers(site.carbon, 0, cfg.durationS);
  }
  const requests = cfg.requests.filter((r) => r.arrivalS < cfg.durationS);
  for (let i = 1; i < requests.length; i++) if (requests[i]!.arrivalS < requests[i - 1]!.arrivalS) throw new Error(`requests must be sorted by arrival: request ${i} arrives before request ${i - 1}`);
  const overhead = cfg.serverOverhead ?? SERVER_POWER_OVERHEAD;
  const delays = cfg.reconfiguration ?? DEFAULT_RECONFIGURATION;
  const clockSwitchDelayMs = delays.clockSwitchMs ?? ENGINE_CLOCK_SWITCH_MS;
  const heartbeatS = cfg.heartbeatS ?? 5;
  const gatewayOptions: SimGatewayOptions = { replicaConcurrency: DEFAULT_REPLICA_CONCURRENCY, queueMax: 1024, queueWaitMs: (cfg.maxQueueS ?? 5) * 1000, ...cfg.gateway };
  const outcomes = emptyOutcomes(requests.length);
  const metrics = new RequestMetrics(cfg, requests, outcomes);
  const queuedS = new Float64Array(requests.length);
  const counts: ReconfigurationCounts = { instanceStarts: 0, tpChanges: 0, clockChanges: 0 };
  const admissionRng = forkRng(seededRng(cfg.seed), 3);
  const replicas: Replica[] = [];
  const engineEvents = new MinHeap();

  // An entry under EcoFreq runs it per iteration within its bounds, as a site agent runs it, held to
  // the tightest SLO of the classes it serves, the requests its site gateway holds for it counted as waiting.
  const ecoModels = new EcoFreqModels();
  const engineClock: EngineClockOf = (site, entry) => {
    const slo = tightestSlo([entry.mainClass, ...entry.classes].flatMap((c) => (c && cfg.slo[c]) || []));
    if (entry.clock.mode !== "policy" || entry.clock.policy !== "ecofreq" || !slo) return entry.mhz;
    return ecoFreqClock(ecoModels.build(cfg.llm, site.gpu, entry.tp, entry.clock, slo), { clockSwitchDelayMs, queued: () => gateways.get(site.id)!.heldByEntry.get(entry.key) ?? 0 });
  };
  const makeReplica: ReplicaFactory = (site, entry, readyAtS, nowS) => {
    const id = replicas.length;
    const engine = new EngineInstance(
      { llm: cfg.llm, gpu: site.gpu, tp: entry.tp, clock: engineClock(site, entry), clockSwitchDelayMs, onProgress: (i, o) => Number.isFinite(o.e2eS) && finished(replicas[id]!, i) },
      requests,
      outcomes,
    );
    engine.nowS = nowS;
    const replica = new Replica(id, site.id, entry.key, entry.model, entry.tp, entry.mhz, readyAtS, kvCapacityTokens(cfg.llm, site.gpu, entry.tp), engine, entry.classes);
    replicas.push(replica);
    return replica;
  };
  const running = new PlanReplicas(cfg.sites, new ProfileIndex(cfg.profile), delays, counts, makeReplica, cfg.makeBeforeBreak !== false, engineClock);
  const gateways = new Map(cfg.sites.map((s) => [s.id as string, new SimSiteGateway(s.id, running, gatewayOptions)]));
  const governors = new Map(cfg.sites.map((s) => [s.id as string, new PowerGovernor()]));
  const siteGpu = new Map(cfg.sites.map((s) => [s.id as string, s.gpu]));
  const statuses = new Map<string, SiteStatus>();
  let plan: Plan | undefined;
  let router: Router | undefined;
  let [plans, corrections, nextPlanS, nextCorrectionS] = [0, 0, 0, Infinity];

  let next = 0;
  let tick = 0;
  for (;;) {
    const arrivalS = next < requests.length ? requests[next]!.arrivalS : Infinity;
    const engineS = engineEvents.peekKey();
    const tickS = tick <= cfg.durationS || queued() > 0 ? tick : Infinity;
    if (tickS === Infinity && arrivalS === Infinity && engineS === Infinity) break;
    if (tickS <= arrivalS && tickS <= engineS) onTick(tick++);
    else if (arrivalS <= engineS) arrive(next++);
    else stepEngine();
  }
  const inFlight = requests.length - metrics.settled;
  return metrics.result({ ...counts, plans, corrections }, inFlight);

  function stepEngine(): void {
    const key = engineEvents.peekKey();
    const r = replicas[engineEvents.pop()]!;
    if (key !== r.scheduledS) return; // superseded by an earlier event of the same engine
    r.scheduledS = Infinity;
    r.engine.step();
    schedule(r);
  }

  function schedule(r: Replica): void {
    const at = r.engine.nextEventS();
    if (at < r.scheduledS) {
      r.scheduledS = at;
      engineEvents.push(at, r.id);
    }
  }

  function arrive(i: number): void {
    const req = requests[i]!;
    const t = req.arrivalS;
    metrics.arrive(i);
    const tried = new Set<string>();
    while (router) {
      const routed = router.select({ classId: req.classId, model: cfg.model, edgeRegions: [], nowMs: t * 1000, excludeSites: tried });
      if (!routed.ok) break;
      const { site, instance } = routed.choice;
      tried.add(site);
      const gateway = gateways.get(site)!;
      if (!governors.get(site)!.admits(admissionRng.next())) continue;
      const entryKey = `${site}/${instance}`;
      const target = gateway.resolve(entryKey, req.classId, cfg.model, t);
      if (!target) continue;
      const replica = gateway.pick(target);
      if (replica) return start(i, replica, t);
      // FREESH's Lat for least laxity first: the request alone on the replicas it waits for.
      const isolatedMs = isolatedServiceMs({ llm: cfg.llm, gpu: siteGpu.get(site)!, tp: target.replicas[0]!.tp, mhz: target.replicas[0]!.mhz }, req.inputTokens, req.outputTokens);
      if (gateway.hold({ id: i, arrivalMs: t * 1000, isolatedMs, entryKey, classId: req.classId })) return;
    }
    metrics.drop(i, t);
  }

  function start(i: number, replica: Replica, t: number): void {
    const req = requests[i]!;
    if (req.inputTokens + req.outputTokens > replica.kvCapacityTokens) return metrics.drop(i, t); // no replica of this size can hold it
    queuedS[i] = t - req.arrivalS;
    replica.inFlight++;
    replica.engine.enqueue(i, t);
    schedule(replica);
  }

  function finished(replica: Replica, i: number): void {
    replica.inFlight--;
    metrics.serve(i, replica.siteId, queuedS[i]!);
    dispatch(gateways.get(replica.siteId)!, replica.engine.nowS);
  }

  /** Places what the site queue holds on replicas with room, in queue order. */
  function dispatch(gateway: SimSiteGateway, t: number): void {
    if (gateway.queue.length === 0) return;
    const placed = gateway.queue.dispatch(t * 1000, (h) => {
      const target = gateway.resolve(h.entryKey, h.classId, cfg.model, t);
      return target && gateway.pick(target);
    });
    for (const { request, placed: replica } of placed) {
      gateway.released(request);
      start(request.id, replica, t);
    }
  }

  function queued(): number {
    let n = 0;
    for (const g of gateways.values()) n += g.queue.length;
    return n;
  }

  function onTick(t: number): void {
    if (t >= 1 && t <= cfg.durationS) for (const site of cfg.sites) powerSecond(site, t);
    running.retire(t);
    if (t < cfg.durationS) replan(t);
    if (router && t % heartbeatS === 0) {
      for (const s of cfg.sites) statuses.set(s.id, siteHeartbeat(s.id, running, gateways.get(s.id)!.heldByEntry, t));
      router.update(planSnapshot(plan!, router.current.planKey, cfg.scheme, cfg.slo, cfg.sites.map((s) => s.id), statuses));
    }
    for (const gateway of gateways.values()) {
      for (const late of gateway.queue.expire(t * 1000)) {
        gateway.released(late);
        metrics.drop(late.id, t);
      }
      dispatch(gateway, t);
    }
    if (t >= 1 && t <= cfg.durationS) metrics.endSecond(t);
    onProgress?.(Math.min(t, cfg.durationS), cfg.durationS);
  }

  /** Planner-L at its cadence (the first plan up at once), else the corrector at its own. */
  function replan(t: number): void {
    let next: Plan | undefined;
    if (t >= nextPlanS) {
      next = cfg.planner.plan(planningContextAt(cfg, t, 1, plan));
      plans++;
      nextPlanS += cfg.planner.cadenceS;
      if (cfg.corrector) nextCorrectionS = t + cfg.corrector.cadenceS;
    } else if (t >= nextCorrectionS && cfg.corrector && plan) {
      const delta = cfg.corrector.correct({ ...planningContextAt(cfg, t, 1, plan, t), current: plan });
      nextCorrectionS += cfg.corrector.cadenceS;
      if (!delta) return;
      next = applyDelta(plan, delta);
      corrections++;
    }
    if (!next) return;
    running.install(next, t, plans === 1 && corrections === 0 && !plan);
    for (const gateway of gateways.values()) gateway.followPlan();
    plan = next;
    for (const s of cfg.sites) statuses.set(s.id, siteHeartbeat(s.id, running, gateways.get(s.id)!.heldByEntry, t));
    const snapshot = planSnapshot(plan, `${plan.version}.${plans}.${corrections}`, cfg.scheme, cfg.slo, cfg.sites.map((s) => s.id), statuses);
    if (router) router.update(snapshot);
    else router = new Router(snapshot, { staleAfterMs: Number.MAX_SAFE_INTEGER });
  }

  /** Second `t - 1 .. t` of a site: its engines' energy, its idle GPUs, the envelope. */
  function powerSecond(site: FleetSimConfig["sites"][number], t: number): void {
    let engineJ = 0;
    let held = 0;
    for (const r of running.bySite.get(site.id)!) {
      engineJ += r.energyUpTo(t);
      held += r.tp;
    }
    const idleW = site.gpu.power.idleW;
    const instancesW = engineJ * overhead;
    const drawW = instancesW + Math.max(0, site.gpus - held) * idleW * overhead;
    const availableW = valueAt(site.power, t - 1);
    const limited = governors.get(site.id)!.observe(drawW, availableW, site.gpus * idleW * overhead);
    metrics.sitePower(site.id, { drawW, availableW, instancesW }, valueAt(site.carbon, t - 1), limited);
  }
}
