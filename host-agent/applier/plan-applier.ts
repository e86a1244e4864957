import { invalidSummary } from "../../src/core/schemas/issue-param.ts";
import type { InstanceState } from "../../src/core/schemas/telemetry.ts";
import type { AppliedReport } from "../../src/core/schemas/agent-messages.ts";
import type { Engine, EngineDriver } from "../engines/engine.ts";
import type { TrackedGpuBackend } from "../gpu-state/tracked-gpu-backend.ts";
import { claimedVersion, SitePlanSlice } from "../protocol/plan-slice.ts";
import { backoffMs, Wakeup, type Backoff } from "../util/backoff.ts";
import { applyOnce, resetAllClocks } from "./apply-once.ts";
import { checkSlice, desiredState, type DesiredState, type PlanSource } from "./desired-state.ts";
import { groupState } from "./instance-state.ts";

export interface PlanApplierOptions {
  site: string;
  gpus: TrackedGpuBackend;
  gpuCount: number;
  driver: EngineDriver;
  /** Sends an applied/refused report to the edge (plans from the edge only). */
  report?: (report: AppliedReport) => Promise<void>;
  /** Keeps each plan taken up from the edge or the local API where a restart finds it (`PlanStore`). */
  keep?: (slice: SitePlanSlice, source: Exclude<PlanSource, "stored">) => void;
  drainTimeoutMs: number;
  /** `afterGiveUpMs`: how long after giving up on a plan it is tried again, whole (0: never). */
  retry: Backoff & { maxAttempts: number; afterGiveUpMs?: number };
  log?: (message: string) => void;
}

/** Where the applier stands. */
export interface ApplierStatus {
  desiredVersion: number | null;
  /** Where the plan being applied (or applied) came from; "stored": kept by an earlier run, applied while the edge cannot be reached. */
  source: PlanSource | null;
  appliedVersion: number | null;
  phase: "idle" | "applying" | "retrying" | "failed";
  attempts: number;
  lastError: string | null;
  /** The last plan refused as invalid, and why. */
  refused: { version: number | null; problems: string[] } | null;
}

/** The outcome of offering a plan; `param` (the field, or null for the whole body) only when the plan failed its schema. */
export type OfferResult = { accepted: true; version: number } | { accepted: false; version: number | null; problems: string[]; param?: string | null };

/**
 * Brings the site to its plan and keeps it there. `start` first returns every GPU to default clocks
 * (a safe state after a restart mid-change). A plan is validated when offered: an invalid one is
 * refused and reported, and the current configuration stays. A valid one is applied by `applyOnce`
 * passes; a pass with failures is reported and retried with exponential backoff, and after
 * `maxAttempts` the applier gives up and resets every GPU's clocks, so no GPU stays locked low for
 * a plan that is not running. A newer plan, `reapply`, an engine that dies, or `afterGiveUpMs` past
 * a give-up (the cause may have gone: a GPU freed, a driver back) starts a new round.
 *
 * @example
 * const applier = new PlanApplier({ site, gpus, gpuCount: 8, driver, drainTimeoutMs: 60_000, retry: { baseMs: 1000, maxMs: 30_000, maxAttempts: 5 } });
 * await applier.start();
 * applier.offer(await pullBody(), "edge");
 */
export class PlanApplier {
  readonly engines = new Map<string, Engine>();
  private desired: DesiredState | null = null;
  private dirty = false;
  private stopped = false;
  private readonly wakeup = new Wakeup();
  private loop: Promise<void> = Promise.resolve();
  private readonly state: ApplierStatus = { desiredVersion: null, source: null, appliedVersion: null, phase: "idle", attempts: 0, lastError: null, refused: null };
  private readonly log: (message: string) => void;

  constructor(private readonly options: PlanApplierOptions) {
    this.log = options.log ?? (() => undefined);
  }

  status(): ApplierStatus {
    return { ...this.state };
  }

  /** The slice being applied (or applied), null before the first. */
  get current(): DesiredState | null {
    return this.desired;
  }

  /** Resets every GPU's clocks, then starts applying plans as they are offered. */
  async start(): Promise<void> {
    const failures = await resetAllClocks(this.options.gpus, this.options.gpuCount);
    for (const f of failures) this.log(`start-up: ${f}`);
    this.loop = this.run();
  }

  /** Validates a plan body; a valid one is applied unless it is the edge plan already being applied. */
  offer(body: unknown, source: PlanSource): OfferResult {
    const parsed = SitePlanSlice.safeParse(body);
    const malformed = parsed.success ? undefined : invalidSummary("plan slice", parsed.error);
    const problems = malformed ? [malformed.message] : checkSlice(parsed.data!, this.options);
    const version = parsed.success ? parsed.data.version : (claimedVersion(body) ?? null);
    if (problems.length > 0) {
      this.state.refused = { version, problems };
      this.log(`refused plan ${version ?? "(no version)"}: ${problems.join("; ")}`);
      if (version !== null && source === "edge") this.send(version, false, `refused: ${problems.join("; ")}`.slice(0, 2000));
      return { accepted: false, version, problems, ...(malformed ? { param: malformed.param } : {}) };
    }
    const slice = parsed.data!;
    const same = this.desired && this.desired.slice.version === slice.version && this.desired.slice.revision === slice.revision;
    if (same && source === "edge" && this.desired!.source === "edge") return { accepted: true, version: slice.version };
    this.desired = desiredState(slice, source, this.options.gpuCount);
    this.state.refused = null;
    this.state.desiredVersion = slice.version;
    this.state.source = source;
    if (source !== "stored") this.options.keep?.(slice, source);
    this.kick();
    return { accepted: true, version: slice.version };
  }

  /** Applies the current plan again (after a give-up, or to undo manual clock changes). */
  reapply(): void {
    if (this.desired) this.kick();
  }

  /** Instance id -> its state, over the planned instances and any engine still running. */
  instanceStates(): Map<string, InstanceState> {
    const ids = new Set([...(this.desired?.slice.site?.instances.map((i) => i.id) ?? []), ...[...this.engines.values()].map((e) => e.launch.instanceId)]);
    return new Map([...ids].map((id) => [id, this.instanceState(id)]));
  }

  /** One instance's state, as telemetry reports it and the gateway reads it (`groupState`). */
  instanceState(id: string): InstanceState {
    // A plan offered but not yet picked up by the loop counts as being applied.
    const busy = this.dirty || this.state.phase === "applying" || this.state.phase === "retrying";
    return groupState([...this.engines.values()].filter((e) => e.launch.instanceId === id), busy);
  }

  /** Stops applying, stops every engine (draining each up to `drainTimeoutMs`) and resets the clocks. */
  async stop(drainTimeoutMs = 0): Promise<void> {
    this.stopped = true;
    this.wakeup.wake();
    // Engines first: stopping one that is still starting also ends a pass waiting on it.
    await this.stopEngines(drainTimeoutMs);
    await this.loop;
    await this.stopEngines(0);
    for (const f of await resetAllClocks(this.options.gpus, this.options.gpuCount)) this.log(`shutdown: ${f}`);
  }

  private async stopEngines(drainTimeoutMs: number): Promise<void> {
    await Promise.all(
      [...this.engines.values()].map(async (e) => {
        if (drainTimeoutMs > 0 && e.state === "ready") await e.drain(drainTimeoutMs).catch(() => undefined);
        await e.stop().catch((error: unknown) => this.log(`stop ${e.launch.instanceId}: ${(error as Error).message}`));
      }),
    );
    this.engines.clear();
  }

  private kick(): void {
    this.dirty = true;
    this.wakeup.wake();
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      if (!this.dirty || !this.desired) {
        await this.wakeup.wait();
        continue;
      }
      this.dirty = false;
      await this.round(this.desired);
    }
  }

  /** Applies `target` until it succeeds, is superseded, or the attempts run out. */
  private async round(target: DesiredState): Promise<void> {
    const { retry } = this.options;
    for (let attempt = 1; !this.stopped; attempt++) {
      this.state.phase = attempt === 1 ? "applying" : "retrying";
      this.state.attempts = attempt;
      const failures = await applyOnce(target, { ...this.options, engines: this.engines, onExit: (e, why) => this.engineExited(e, why), log: this.log, stopping: () => this.stopped });
      if (this.stopped) return;
      if (this.dirty) return;
      const version = target.slice.version;
      if (failures.length === 0) {
        Object.assign(this.state, { phase: "idle", appliedVersion: version, lastError: null });
        this.log(`applied plan ${version}`);
        if (target.source === "edge") this.send(version, true);
        return;
      }
      this.state.lastError = failures.join("; ");
      if (attempt >= retry.maxAttempts) {
        const resetFailures = await resetAllClocks(this.options.gpus, this.options.gpuCount);
        this.state.phase = "failed";
        const message = `gave up on plan ${version} after ${attempt} attempts (${this.state.lastError}); GPU clocks reset${resetFailures.length ? ` except: ${resetFailures.join("; ")}` : ""}`;
        this.log(message);
        if (target.source === "edge") this.send(version, false, message);
        this.retryLater(target);
        return;
      }
      const delay = backoffMs(retry, attempt);
      this.log(`plan ${version} attempt ${attempt} failed (${this.state.lastError}); retrying in ${delay} ms`);
      if (target.source === "edge") this.send(version, false, `attempt ${attempt} of ${retry.maxAttempts} failed: ${this.state.lastError}; retrying in ${delay} ms`);
      await this.wakeup.wait(delay);
      if (this.dirty) return;
    }
  }

  /** A new round for `target` `afterGiveUpMs` from now, unless another plan has come meanwhile. */
  private retryLater(target: DesiredState): void {
    const afterMs = this.options.retry.afterGiveUpMs ?? 0;
    if (afterMs <= 0) return;
    const timer = setTimeout(() => {
      if (this.stopped || this.desired !== target || this.state.phase !== "failed") return;
      this.log(`trying plan ${target.slice.version} again, ${afterMs} ms after giving up on it`);
      this.kick();
    }, afterMs);
    timer.unref();
  }

  private engineExited(engine: Engine, reason: string): void {
    this.log(`engine ${engine.launch.instanceId}#${engine.launch.replica} stopped on its own: ${reason}`);
    const timer = setTimeout(() => this.stopped || this.kick(), this.options.retry.baseMs);
    timer.unref();
  }

  private send(planVersion: number, ok: boolean, message?: string): void {
    if (!this.options.report) return;
    const states = this.instanceStates();
    const instances = (this.desired?.slice.site?.instances ?? []).map((inst) => ({
      id: inst.id,
      state: states.get(inst.id) ?? "stopped",
      clockMhz: this.options.gpus.lockOf(inst.gpus[0]!)?.maxMhz ?? null,
    }));
    const report = { planVersion, appliedAtMs: Date.now(), ok, ...(message ? { message: message.slice(0, 2000) } : {}), instances } as AppliedReport;
    this.options.report(report).catch((error: unknown) => this.log(`could not report plan ${planVersion} to the edge: ${(error as Error).message}`));
  }
}
