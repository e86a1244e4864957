import { kvCapacityTokens } from "../../src/core/engine/kv-capacity.ts";
import { gpuSpec, type GpuSpec } from "../../src/core/model/gpu-specs.ts";
import { llmSpec, type LlmSpec } from "../../src/core/model/llm-specs.ts";
import { mainClass } from "../../src/core/planning/plan-reading.ts";
import { tightestSlo } from "../../src/core/planning/slo.ts";
import type { GpuType } from "../../src/core/schemas/ids.ts";
import type { PlannedInstance } from "../../src/core/schemas/plan.ts";
import type { Slo } from "../../src/core/schemas/request-class.ts";
import type { ApplierStatus } from "../applier/plan-applier.ts";
import type { DesiredState } from "../applier/desired-state.ts";
import { clockBounds } from "../../src/core/model/clock-grid.ts";
import { launchKey, type Engine } from "../engines/engine.ts";
import type { TrackedGpuBackend } from "../gpu-state/tracked-gpu-backend.ts";
import type { FrequencyControllerFactory } from "../sim-engine/frequency-controller.ts";
import type { RequestLog } from "../telemetry/request-log.ts";
import type { RequestTracker } from "../telemetry/request-tracker.ts";
import { periodicTask, type PeriodicTask } from "../util/periodic-task.ts";
import { ClockActuator } from "./clock-actuator.ts";
import type { ControlProfiles } from "./control-profiles.ts";
import { EcoFreqModels } from "../../src/core/planning/greenserve/eco-freq-models.ts";
import { EcoFreqIterationController, EcoFreqMetricsController } from "./ecofreq-controller.ts";
import { InstanceManagerController } from "./instance-manager-controller.ts";
import type { EmergencyView } from "./emergency-ladder-step.ts";
import type { EmergencyStep } from "../../src/core/planning/dynamollm/emergency-ladder.ts";
import { prefillTime } from "../../src/core/model/iteration-time.ts";
import { instanceSlo, type SloSettings } from "./instance-slo.ts";
import { profileSlo } from "./profile-slo.ts";
import type { ClockPolicy, ControlScope, LocalController } from "./local-controller.ts";
import { MiadInstanceController } from "./miad-controller.ts";
import { PowerLadder, type PowerLadderSettings, type PowerLadderStep } from "./power-ladder.ts";

/** What the controllers read of the plan applier. */
export interface ApplierView {
  readonly current: DesiredState | null;
  readonly engines: ReadonlyMap<string, Engine>;
  status(): ApplierStatus;
}

export interface LocalControllersOptions {
  gpus: TrackedGpuBackend;
  /** Per GPU index, its type. */
  gpuTypes: readonly GpuType[];
  requestLog: RequestLog;
  /** Requests the site gateway is serving: MIAD's view of late requests, EcoFreq's of the site queue. */
  requests?: RequestTracker;
  applier: () => ApplierView;
  /** True where the engines call a frequency hook each iteration (simulated engines): EcoFreq then runs inside them. */
  perIteration: boolean;
  slo: SloSettings;
  profiles: ControlProfiles;
  serverOverhead: number;
  /** Site clock, ms. */
  nowMs: () => number;
  /** Site seconds per wall second (a simulated site's speed); every period below is in site time. */
  speed: number;
  /** Site ms between EcoFreq decisions on engines without a per-iteration hook. */
  ecofreqPeriodMs: number;
  /** Site ms between power-ladder checks, which also start and stop controllers (default 1000). */
  checkPeriodMs?: number;
  ladder?: Partial<PowerLadderSettings>;
  log?: (message: string) => void;
}

interface Running {
  controller: LocalController;
  /** Its decisions' loop, and its watch's where it has one. */
  tasks: PeriodicTask[];
}

/** A planned controller that could not start, and why; its GPUs stay locked to the plan's bounds. */
export interface UnstartedController {
  instance: string;
  policy: ClockPolicy;
  reason: string;
}

/** What the controllers report: the ladder, each controller running outside an engine, and those that could not start. */
export interface ControllersStatus {
  powerLadder: { level: number; step: PowerLadderStep; sitePowerW: number; capW: number | null };
  /** `emergency`: the rung of an instance manager's emergency ladder, once it decided. */
  controllers: { instance: string; policy: ClockPolicy; gpus: readonly number[]; mhz: number | null; emergency?: EmergencyStep }[];
  unstarted: UnstartedController[];
}

/**
 * The agent's local frequency control within the plan's clock bounds. Per planned instance whose
 * clock is a policy, the controller it names:
 * - `ecofreq`: GreenServe's EcoFreq. Simulated engines call it before every iteration through
 *   `frequencyControllers` (the engine's frequency hook); vLLM and SGLang have no such hook, so for
 *   them it runs every `ecofreqPeriodMs` per replica from the engine's metrics;
 * - `miad`: FREESH's MIAD every second from the instance's finished requests and those in flight;
 * - `instance-manager`: DynamoLLM's instance manager every 5 s from a profile table, climbing the
 *   emergency ladder when the instance's pool misses its TTFT deadlines.
 * A supervisor loop (every `checkPeriodMs`) starts a controller once its plan is applied, stops it
 * when the instance leaves the plan or its setting changes, and runs the site power ladder. A
 * controller only touches clocks while its plan is applied and unchanged; while a plan is being
 * applied the applier sets the range locks, and the controllers take over again afterwards.
 *
 * @example
 * const controllers = new LocalControllers({ gpus, gpuTypes, requestLog, applier: () => applier, perIteration: true, ... });
 * const driver = new SimEngineDriver({ site, requestLog, controllers: controllers.frequencyControllers });
 * controllers.start();
 */
export class LocalControllers {
  readonly actuator: ClockActuator;
  readonly ladder: PowerLadder;
  /** Per instance key, its controllers (empty where EcoFreq runs inside the engines). */
  private readonly running = new Map<string, Running[]>();
  private readonly ecoModels = new EcoFreqModels();
  private readonly supervisor: PeriodicTask;
  /** Per instance key, why its controller could not start (told once, kept while the instance is planned). */
  private readonly unstarted = new Map<string, UnstartedController>();
  private readonly log: (message: string) => void;
  private keys: { of: DesiredState | null; keys: Set<string> } = { of: null, keys: new Set() };

  constructor(private readonly o: LocalControllersOptions) {
    this.log = o.log ?? (() => undefined);
    this.actuator = new ClockActuator(o.gpus);
    this.ladder = new PowerLadder({ actuator: this.actuator, gpuCount: o.gpuTypes.length, serverOverhead: o.serverOverhead, settings: o.ladder, log: this.log });
    this.supervisor = this.loop(o.checkPeriodMs ?? 1000, () => this.supervise(), "power ladder");
  }

  /** For simulated engines: EcoFreq for an `ecofreq` clock, run per iteration; the other policies run outside the engine. */
  readonly frequencyControllers: FrequencyControllerFactory = (policy, bounds, engine) => {
    if (policy !== "ecofreq") return undefined;
    const planned = this.o.applier().current?.slice.site?.instances.find((i) => i.id === engine.launch.instanceId);
    const slo = this.ecoFreqSlo(engine.llm, engine.gpu, engine.launch.tp, planned?.loadRps ?? {});
    const { requests } = this.o;
    const queued = requests ? { queued: () => requests.queuedFor(engine.launch.instanceId) } : {};
    return new EcoFreqIterationController(this.ecoModels.build(engine.llm, engine.gpu, engine.launch.tp, bounds, slo), (b) => this.ladder.allowed(b), queued);
  };

  start(): void {
    this.supervisor.start();
  }

  /** Stops every loop and restores power limits the ladder lowered; clocks are left to the applier. */
  async stop(): Promise<void> {
    await this.supervisor.stop();
    await Promise.all([...this.running.values()].flat().flatMap((r) => r.tasks.map((t) => t.stop())));
    this.running.clear();
    await this.ladder.restorePowerLimits();
  }

  /** One supervision step: controllers brought in line with the plan, then one power-ladder check. */
  async supervise(): Promise<void> {
    this.reconcile();
    await this.ladder.check(this.o.applier().current?.slice.site ?? null, this.settled());
  }

  status(): ControllersStatus {
    const { state, step, sitePowerW, capW } = this.ladder;
    const controllers = [...this.running.values()].flat().map(({ controller: c }) => ({ instance: c.scope.instanceId, policy: c.policy, gpus: c.scope.gpus, mhz: c.mhz, ...(c instanceof InstanceManagerController && c.decision ? { emergency: c.decision.emergency } : {}) }));
    return { powerLadder: { level: state.level, step, sitePowerW, capW }, controllers, unstarted: [...this.unstarted.values()] };
  }

  /** Stops controllers whose instance or setting left the plan; once the plan is applied, starts the missing ones. */
  private reconcile(): void {
    const wanted = this.currentKeys();
    for (const [key, group] of this.running) {
      if (wanted.has(key)) continue;
      for (const t of group.flatMap((r) => r.tasks)) void t.stop();
      this.running.delete(key);
    }
    for (const key of this.unstarted.keys()) if (!wanted.has(key)) this.unstarted.delete(key);
    if (!this.settled()) return;
    for (const inst of this.o.applier().current?.slice.site?.instances ?? []) {
      const key = keyOf(inst);
      if (inst.clock.mode !== "policy" || this.running.has(key) || this.unstarted.has(key)) continue;
      try {
        const group = this.create(inst, key).map((c) => ({ controller: c, tasks: this.loopsOf(c, inst.id) }));
        this.running.set(key, group);
        for (const t of group.flatMap((r) => r.tasks)) t.start();
      } catch (error) {
        this.unstarted.set(key, { instance: inst.id, policy: inst.clock.policy, reason: (error as Error).message });
        this.log(`no ${inst.clock.policy} controller for instance ${inst.id}: ${(error as Error).message}; its GPUs stay locked to the plan's bounds`);
      }
    }
  }

  /** A controller's decision loop, and its watch's where it has one. */
  private loopsOf(c: LocalController, instanceId: string): PeriodicTask[] {
    const decisions = this.loop(c.periodMs, () => c.tick(), `${c.policy} ${instanceId}`);
    return c.watch && c.watchPeriodMs ? [decisions, this.loop(c.watchPeriodMs, () => c.watch!(), `${c.policy} ${instanceId} watch`)] : [decisions];
  }

  /** The controllers of one instance (none for EcoFreq on engines that run it per iteration). */
  private create(inst: PlannedInstance, key: string): LocalController[] {
    const { policy } = inst.clock as { policy: ClockPolicy };
    const gpu = gpuSpec(this.o.gpuTypes[inst.gpus[0]!]!);
    const perfModel = this.o.applier().current?.launches.find((l) => l.instanceId === inst.id)?.perfModel;
    if (perfModel === undefined) return this.createMeasured(inst, key, policy, gpu);
    const llm = llmSpec(perfModel);
    const planned = mainClass(inst.loadRps);
    const scope = (gpus: readonly number[]) => this.scope(inst, key, gpus);
    const sloOf = (classId: string | undefined) => instanceSlo(llm, gpu, inst.tp, classId, this.o.slo);
    const { requestLog, requests } = this.o;
    if (policy === "miad") return [new MiadInstanceController(scope(inst.gpus), { requestLog, ...(requests ? { inFlight: requests } : {}), sloOf })];
    if (policy === "instance-manager") {
      const bounds = clockBounds(inst.clock);
      const rows = () => this.o.profiles.rowsFor(llm, gpu, inst.tp, planned, bounds);
      const emergency = requests ? { emergency: this.emergencyView(inst, requests, llm, gpu, sloOf) } : {};
      return [new InstanceManagerController(scope(inst.gpus), { requestLog, rows, sloOf, replicas: inst.replicas, plannedClass: planned, ...emergency })];
    }
    if (this.o.perIteration) return [];
    return Array.from({ length: inst.replicas }, (_, replica) => this.ecoFreqOfReplica(inst, replica, scope(inst.gpus.slice(replica * inst.tp, (replica + 1) * inst.tp)), llm, gpu, this.ecoFreqSlo(llm, gpu, inst.tp, inst.loadRps)));
  }

  /**
   * The SLO EcoFreq holds an instance to: the tightest of those of the classes the plan gives it
   * load of, so a clock chosen for one iteration keeps every class it serves within its own (the
   * default class's when it has none).
   */
  private ecoFreqSlo(llm: LlmSpec, gpu: GpuSpec, tp: number, loadRps: Readonly<Record<string, number>>): Slo {
    const classes = Object.keys(loadRps).filter((c) => (loadRps[c] ?? 0) > 0);
    return tightestSlo(classes.map((c) => instanceSlo(llm, gpu, tp, c, this.o.slo))) ?? instanceSlo(llm, gpu, tp, undefined, this.o.slo);
  }

  /**
   * The controllers of an instance whose model the performance model does not know: MIAD and the
   * instance manager run on its measured profile (the agent's `controlProfile` rows for it) or the
   * fixed SLO targets; EcoFreq, which predicts each iteration from the performance model, cannot.
   */
  private createMeasured(inst: PlannedInstance, key: string, policy: ClockPolicy, gpu: GpuSpec): LocalController[] {
    const unknown = `the performance model does not know model ${inst.model} (name its perfModel in the fleet)`;
    if (policy === "ecofreq") throw new Error(`EcoFreq predicts each iteration from the performance model; ${unknown}`);
    const rows = this.o.profiles.measuredRows(inst.model, gpu.type, inst.tp);
    const planned = mainClass(inst.loadRps);
    const sloOf = (classId: string | undefined) => {
      const slo = profileSlo(rows, classId, this.o.slo);
      if (!slo) throw new Error(`no SLO for instance ${inst.id}: ${unknown}, the agent's controlProfile has no rows for it on ${inst.tp} x ${gpu.type}, and sloTtftMs/sloTbtMs are not set`);
      return slo;
    };
    sloOf(planned);
    const scope = this.scope(inst, key, inst.gpus);
    const { requestLog, requests } = this.o;
    if (policy === "miad") return [new MiadInstanceController(scope, { requestLog, ...(requests ? { inFlight: requests } : {}), sloOf })];
    if (rows.length === 0) throw new Error(`the instance manager needs a profile and ${unknown}: run \`greenference agent profile\` for it and pass the table as controlProfile`);
    return [new InstanceManagerController(scope, { requestLog, rows: async () => rows, sloOf: (c) => sloOf(c), replicas: inst.replicas, plannedClass: planned })];
  }

  private ecoFreqOfReplica(inst: PlannedInstance, replica: number, scope: ControlScope, llm: LlmSpec, gpu: GpuSpec, slo: Slo): LocalController {
    const eco = this.ecoModels.build(llm, gpu, inst.tp, scope.bounds, slo);
    const load = async () => {
      const engine = this.o.applier().engines.get(launchKey({ instanceId: inst.id, replica }));
      if (!engine || engine.state !== "ready") throw new Error(`replica ${replica} of ${inst.id} is not ready`);
      // Unknown once a failed read no longer stands on the last good one: EcoFreq then runs at the top.
      return engine.load().catch(() => undefined);
    };
    const { requests } = this.o;
    const queued = requests ? { queued: () => requests.queuedFor(inst.id) } : {};
    return new EcoFreqMetricsController(scope, { eco, load, ...queued, kvCapacityTokens: kvCapacityTokens(llm, gpu, inst.tp), periodMs: this.o.ecofreqPeriodMs });
  }

  /** The emergency ladder's view of an instance: its prefill times on the model, its classes' TTFT, its pool's peers (same model and planned class) with no request waiting. */
  private emergencyView(inst: PlannedInstance, requests: RequestTracker, llm: LlmSpec, gpu: GpuSpec, sloOf: (c: string | undefined) => ReturnType<typeof instanceSlo>): EmergencyView {
    const pool = mainClass(inst.loadRps);
    const ttftMs = (c: string | undefined) => sloOf(c ?? pool).ttftMs;
    return {
      requests,
      prefillMs: (tokens, mhz) => prefillTime({ llm, gpu, tp: inst.tp, mhz }, [tokens]).ms,
      ttftMs,
      peers: () =>
        (this.o.applier().current?.slice.site?.instances ?? [])
          .filter((p) => p.id !== inst.id && p.model === inst.model && mainClass(p.loadRps) === pool)
          .map((p) => ({ instance: p.id as string, spareMs: requests.inFlightOf(p.id).some((r) => r.awaitingFirstToken) ? 0 : ttftMs(pool) })),
      squashAfterMs: 2 * ttftMs(pool),
    };
  }

  private scope(inst: PlannedInstance, key: string, gpus: readonly number[]): ControlScope {
    const bounds = clockBounds(inst.clock);
    return {
      instanceId: inst.id,
      gpus,
      bounds,
      actuator: this.actuator,
      now: this.o.nowMs,
      isCurrent: () => this.settled() && this.currentKeys().has(key),
      allowed: () => this.ladder.allowed(bounds),
    };
  }

  /** True when the plan the applier holds is applied and no change is under way. */
  private settled(): boolean {
    const applier = this.o.applier();
    const status = applier.status();
    return applier.current !== null && status.phase === "idle" && status.appliedVersion === applier.current.slice.version;
  }

  private currentKeys(): Set<string> {
    const current = this.o.applier().current;
    if (this.keys.of !== current) this.keys = { of: current, keys: new Set((current?.slice.site?.instances ?? []).filter((i) => i.clock.mode === "policy").map(keyOf)) };
    return this.keys.keys;
  }

  /** A loop every `siteMs` of site time; failures are logged when their message changes, and back off. */
  private loop(siteMs: number, attempt: () => Promise<void>, what: string): PeriodicTask {
    const intervalMs = Math.max(1, Math.round(siteMs / this.o.speed));
    let last = "";
    return periodicTask({ intervalMs, backoff: { baseMs: intervalMs, maxMs: Math.max(intervalMs, 30_000) } }, async () => {
      try {
        await attempt();
        last = "";
        return true;
      } catch (error) {
        const message = (error as Error).message;
        if (message !== last) this.log(`${what}: ${message}`);
        last = message;
        return false;
      }
    });
  }
}

/** What identifies a controller: the instance, its setting and where it runs. */
function keyOf(inst: PlannedInstance): string {
  return `${inst.id}|${JSON.stringify(inst.clock)}|${inst.model}|${inst.tp}|${inst.gpus.join(",")}`;
}
