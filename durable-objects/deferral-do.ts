import { DurableObject } from "cloudflare:workers";
import { DeferralBook, type BatchAllotment, type BatchReport } from "../src/core/deferral/deferral-book.ts";
import { liveDeferralSites } from "../src/core/deferral/live-sites.ts";
import { FlexHold, type FlexDecision } from "../src/core/schemas/flex.ts";
import type { ProfileRow } from "../src/core/schemas/profile.ts";
import { heartbeatTimeoutMs } from "../src/edge/env.ts";
import type { LpSolver } from "../src/core/ports/lp-solver.ts";
import { workerHighsSolver } from "../src/solver/highs-worker-solver.ts";
import { javascriptLpSolver } from "../src/solver/javascript-lp-solver.ts";
import { controlStub } from "./control-do.ts";

/** How far ahead the scheduler plans: a day of Planner-L's 15-minute slots (the Batch API's window). */
export const DEFERRAL_HORIZON_SLOTS = 96;

/** A batch's turn: what it may run now, and when the next slot starts (its next turn). */
export interface BatchTurn {
  allotments: BatchAllotment[];
  nextSlotMs: number;
  /** Why the slot could not be planned (its lines then run as they come, spare-only), or null. */
  unplanned: string | null;
}

/**
 * DEFERRAL_SLOT_S (Planner-L's 900 s unless set) over CADENCE_SPEEDUP (the local stack's sped-up
 * clock), in ms: the slot the scheduler plans and releases work by.
 */
export function deferralSlotMs(env: Env): number {
  const slotS = Number(env.DEFERRAL_SLOT_S);
  const speedup = Number(env.CADENCE_SPEEDUP);
  return Math.max(1000, Math.round(((Number.isFinite(slotS) && slotS > 0 ? slotS : 900) * 1000) / (Number.isFinite(speedup) && speedup > 0 ? speedup : 1)));
}

/**
 * The edge's one deferral scheduler (`idFromName("global")`): every batch's pending lines and
 * every held flex request, planned together by the core's `releaseNow` over the sites as ControlDO
 * knows them (`liveDeferralSites`: the plan's headroom, the power and carbon forecasts). Each slot
 * is planned at its first batch turn or at its alarm (set for the next slot while anything
 * waits); a batch that arrives mid-slot is planned in at once, a flex request alone in what the
 * slot's plan leaves. The book is in memory: batches report their lines at every turn and a held
 * request's Worker waits on `holdFlex` (and asks again if the object restarts), so an evicted
 * object rebuilds it from them.
 */
export class DeferralDO extends DurableObject<Env> {
  /** The scheduler's LP solver: HiGHS, loaded once per isolate before the first plan; javascript-lp-solver while it is not (or if it cannot load). */
  private solver: LpSolver = javascriptLpSolver();
  private solverLoad: Promise<void> | null = null;
  private readonly book = new DeferralBook({ slotMs: deferralSlotMs(this.env), horizonSlots: DEFERRAL_HORIZON_SLOTS, solver: { solve: (model, options) => this.solver.solve(model, options) } });
  private readonly waiters = new Map<string, Array<(decision: FlexDecision) => void>>();
  private profile: { storedAtMs: number; rows: ProfileRow[] } | null = null;
  private replanning: Promise<void> | null = null;

  /** A batch's turn: records its pending lines by class and hands it what the slot under way releases to it. */
  async batchTurn(report: BatchReport): Promise<BatchTurn> {
    const nowMs = Date.now();
    const known = this.book.knows(report.batchId);
    if (!known) this.book.reportBatch(report, nowMs);
    await this.ensurePlanned(nowMs, !known);
    const allotments = this.book.reportBatch(report, nowMs);
    await this.armAlarm(nowMs);
    return { allotments, nextSlotMs: this.nextSlotMs(nowMs), unplanned: this.book.unplannedWhy };
  }

  /** Forgets a batch that ended (completed, cancelled, expired). */
  batchDone(batchId: string): void {
    this.book.dropBatch(batchId);
  }

  /**
   * Holds a flex request until the scheduler releases it to a site, serves it at once, or refuses
   * it (the bounds are full). Asked again for a request it holds (the Worker retries after an
   * object restart), it waits on the same decision.
   */
  async holdFlex(input: FlexHold): Promise<FlexDecision> {
    const hold = FlexHold.parse(input);
    const nowMs = Date.now();
    const waiting = this.waiters.get(hold.id);
    if (waiting) return new Promise((resolve) => waiting.push(resolve));
    const refused = this.book.refuses(hold, nowMs);
    if (refused) return refused;
    await this.ensurePlanned(nowMs, false);
    const decided = this.book.admitFlex(hold, nowMs);
    if (decided) return decided;
    await this.armAlarm(nowMs);
    return new Promise((resolve) => this.waiters.set(hold.id, [resolve]));
  }

  /** Forgets a held request whose client is no longer waiting. */
  dropFlex(id: string): void {
    this.book.dropFlex(id);
    this.waiters.delete(id);
  }

  /** How the slot under way was planned (method, notes) and what waits. */
  status(): DeferralBook["view"] & { slotMs: number } {
    return { ...this.book.view, slotMs: deferralSlotMs(this.env) };
  }

  /** A slot starts: plans it (releasing held flex requests whose moment has come) while anything waits. */
  override async alarm(): Promise<void> {
    const nowMs = Date.now();
    await this.ensurePlanned(nowMs, false);
    await this.armAlarm(nowMs);
  }

  /** Plans the slot under way unless it is planned (or `force`: a batch arrived mid-slot); concurrent callers share one plan. */
  private async ensurePlanned(nowMs: number, force: boolean): Promise<void> {
    await this.loadSolver();
    while (this.replanning) await this.replanning;
    if (!force && this.book.planned(nowMs)) return;
    this.replanning = this.replan(nowMs).finally(() => (this.replanning = null));
    await this.replanning;
  }

  private loadSolver(): Promise<void> {
    this.solverLoad ??= workerHighsSolver().then(
      (highs) => void (this.solver = highs),
      (error: unknown) => console.error("deferral: HiGHS did not load; planning on javascript-lp-solver", error),
    );
    return this.solverLoad;
  }

  private async replan(nowMs: number): Promise<void> {
    const grid = this.book.gridAt(nowMs);
    let decisions: Map<string, FlexDecision>;
    try {
      const src = await controlStub(this.env).deferralSources(this.profile?.storedAtMs ?? null);
      if (src.profile?.rows) this.profile = { storedAtMs: src.profile.storedAtMs, rows: src.profile.rows };
      if (!src.profile) this.profile = null;
      if (!src.fleet || !src.plan || !this.profile) {
        decisions = this.book.unplanned(grid, !src.fleet ? "no fleet is configured" : !src.plan ? "no plan yet" : "no profile table (PUT /admin/v1/profile): work that can wait cannot be priced");
      } else {
        const sources = { fleet: src.fleet, plan: src.plan, forecasts: src.forecasts, profile: this.profile.rows, statuses: src.statuses, reportedCarbon: src.carbon, nowMs, staleAfterMs: 2 * heartbeatTimeoutMs(this.env) };
        const { sites, notes } = liveDeferralSites(sources, grid);
        decisions = this.book.replan(grid, sites, nowMs, notes);
      }
    } catch (error) {
      console.error("deferral: the slot could not be planned", error);
      decisions = this.book.unplanned(grid, `the scheduler failed: ${error instanceof Error ? error.message : String(error)}`);
    }
    for (const [id, decision] of decisions) {
      for (const resolve of this.waiters.get(id) ?? []) resolve(decision);
      this.waiters.delete(id);
    }
  }

  /** The alarm at the next slot's start while anything waits (held flex requests, known batches). */
  private async armAlarm(nowMs: number): Promise<void> {
    const view = this.book.view;
    if (view.flexHeld === 0 && view.batches === 0) return;
    await this.ctx.storage.setAlarm(this.nextSlotMs(nowMs));
  }

  private nextSlotMs(nowMs: number): number {
    const slotMs = deferralSlotMs(this.env);
    return (Math.floor(nowMs / slotMs) + 1) * slotMs;
  }
}

export const deferralStub = (env: Env) => env.DEFERRAL.get(env.DEFERRAL.idFromName("global"));
