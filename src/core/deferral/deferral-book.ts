import type { LpSolver } from "../ports/lp-solver.ts";
import type { DeferrableWork, DeferralInput, DeferralRelease, DeferralSite } from "../schemas/deferral.ts";
import { MAX_BACKLOG_ENTRIES } from "../schemas/deferral.ts";
import { FLEX_LIMITS, type FlexDecision, type FlexHold } from "../schemas/flex.ts";
import type { ClassId } from "../schemas/ids.ts";
import type { DeferralModelOptions } from "./deferral-model.ts";
import type { DeferralGrid } from "./live-sites.ts";
import { releaseNow } from "./release-now.ts";
import { noneTaken, residualSites, take, takePlanned, type TakenCapacity } from "./residual-sites.ts";

/**
 * Lines of one class of a batch to run now: at `site` in the capacity interactive traffic leaves
 * (spare-only), at no site in particular but still spare-only (`site` null: the class could not be
 * priced), or at once as interactive traffic (`spareOnly` false: waiting would miss the deadline).
 */
export interface BatchAllotment {
  classId: ClassId;
  site: string | null;
  lines: number;
  spareOnly: boolean;
}

/** A batch's lines not yet answered, by class, as its BatchDO reports them each turn. */
export interface BatchReport {
  batchId: string;
  submittedAtMs: number;
  deadlineMs: number;
  pending: Readonly<Record<string, number>>;
}

/** Batches the book plans for at once; a batch beyond it waits for room (its lines stay pending). */
export const MAX_PLANNED_BATCHES = 2_000;
/** Slots without a turn after which a batch is left out of the plan (it comes back at its next turn). */
export const STALE_BATCH_SLOTS = 2;
/** Batch deadlines are planned as if at the last whole group of this many slots before them: fewer LP cohorts, never a later deadline. */
export const DEADLINE_GROUP_SLOTS = 4;

interface BatchEntry {
  report: BatchReport;
  queued: Map<ClassId, number>;
  allot: BatchAllotment[];
  /** Its last turn: a batch silent for STALE_BATCH_SLOTS (waiting out a carbon budget, or gone) leaves the plan until it reports again. */
  seenAtMs: number;
}

type Origin = { batchId: string; classId: ClassId } | { flexId: string };
interface Backlog {
  work: DeferrableWork[];
  origins: Map<string, Origin>;
}

/** The slot under way as planned: its grid and sites, what is taken of it, and how it was planned. */
interface PlannedSlot {
  grid: DeferralGrid;
  sites: DeferralSite[];
  taken: TakenCapacity;
  /** Set when the slot could not be planned: work runs as it comes (batches spare-only, flex at once). */
  unplanned: string | null;
  method: string;
  notes: string[];
}

/**
 * All the edge's work that can wait, planned together by the core scheduler (`releaseNow`): the
 * lines of each batch by class and every held flex request. The slot under way is planned once
 * (`replan`, again when a batch arrives mid-slot), with what it already committed kept; each batch
 * takes its share at its turn (`reportBatch`); a flex request that arrives mid-slot is planned
 * alone in the capacity the slot's plan leaves (`admitFlex`) and, if it waits, with everything
 * else at the next slot. Pure: the solver and the sites come in; the Durable Object keeps it.
 *
 * @example
 * const book = new DeferralBook({ slotMs: 900_000, horizonSlots: 96, solver });
 * book.replan(book.gridAt(now), liveDeferralSites(sources, book.gridAt(now)).sites, now);
 * book.reportBatch({ batchId, submittedAtMs, deadlineMs, pending: { SS: 40 } }, now); // [{ classId: "SS", site: "wind-a", lines: 12, spareOnly: true }]
 */
export class DeferralBook {
  private readonly batches = new Map<string, BatchEntry>();
  private readonly flex = new Map<string, FlexHold>();
  private slot: PlannedSlot | null = null;

  constructor(private readonly o: { slotMs: number; horizonSlots: number; solver: LpSolver }) {}

  /** The grid a plan made at `nowMs` covers: from the slot under way to the latest deadline it holds (a flex request's longest wait at least), at most `horizonSlots`. */
  gridAt(nowMs: number): DeferralGrid {
    const startMs = Math.floor(nowMs / this.o.slotMs) * this.o.slotMs;
    let latest = nowMs + FLEX_LIMITS.maxDeadlineS * 1000;
    for (const b of this.batches.values()) latest = Math.max(latest, b.report.deadlineMs);
    const slots = Math.min(this.o.horizonSlots, Math.max(1, Math.ceil((latest - startMs) / this.o.slotMs)));
    return { startMs, slotMs: this.o.slotMs, slots };
  }

  /** Whether the slot under way at `nowMs` is planned (a new slot is planned at its first turn or alarm). */
  planned(nowMs: number): boolean {
    return this.slot?.grid.startMs === Math.floor(nowMs / this.o.slotMs) * this.o.slotMs;
  }

  /** Whether a batch is known (a batch's first turn plans it in at once). */
  knows(batchId: string): boolean {
    return this.batches.has(batchId);
  }

  /** Why the slot under way could not be planned, or null when it was (or is not yet). */
  get unplannedWhy(): string | null {
    return this.slot?.unplanned ?? null;
  }

  /** How the slot under way was planned, for the status view. */
  get view(): { slotStartMs: number | null; method: string | null; notes: string[]; batches: number; flexHeld: number } {
    return { slotStartMs: this.slot?.grid.startMs ?? null, method: this.slot?.method ?? null, notes: this.slot?.notes ?? [], batches: this.batches.size, flexHeld: this.flex.size };
  }

  /**
   * Plans the slot under way over `sites` (built on `grid`, from `gridAt`): which batch lines and
   * held flex requests start now and where, and which are served at once because waiting would
   * miss their deadline. What this slot already committed stays taken. Returns the decisions for
   * the flex requests that leave the book.
   */
  replan(grid: DeferralGrid, sites: DeferralSite[], nowMs: number, notes: readonly string[] = []): Map<string, FlexDecision> {
    const kept = this.slot?.grid.startMs === grid.startMs && this.slot.sites.length === sites.length ? this.slot.taken[0] : undefined;
    const taken = noneTaken(grid.slots, sites.length);
    if (kept) taken[0] = kept.map((x) => ({ ...x }));
    this.slot = { grid, sites, taken, unplanned: null, method: "empty", notes: [...notes] };
    // A new slot hands out afresh; mid-slot, what was allotted and not yet taken stays allotted.
    if (!kept) for (const b of this.batches.values()) b.allot = [];
    for (const [id, b] of this.batches) if (nowMs - b.seenAtMs > STALE_BATCH_SLOTS * grid.slotMs) this.batches.delete(id);
    const priced = new Set(sites.flatMap((s) => Object.keys(s.costs)));
    const decisions = new Map<string, FlexDecision>();
    // Flex first: its client is waiting and its window is short; batch work plans around it.
    const flex = this.flexBacklog(grid, priced, nowMs, decisions);
    this.plan(flex, { reserveLastSlot: false }, nowMs, decisions);
    this.plan(this.batchBacklog(grid, priced, nowMs), {}, nowMs, decisions);
    return decisions;
  }

  /** Marks the slot under way as not plannable (no fleet, plan or profile): batches run as they come, spare-only; flex requests are served at once. */
  unplanned(grid: DeferralGrid, why: string): Map<string, FlexDecision> {
    this.slot = { grid, sites: [], taken: noneTaken(0, 0), unplanned: why, method: "unplanned", notes: [why] };
    const decisions = new Map<string, FlexDecision>([...this.flex.keys()].map((id) => [id, { kind: "serve-now", why } as const]));
    this.flex.clear();
    for (const b of this.batches.values()) b.allot = [];
    return decisions;
  }

  /**
   * A batch's turn: records its pending lines and hands it what the slot released to it (once).
   * A batch the book has no room for gets nothing; one in an unplanned slot gets all its lines,
   * spare-only, wherever the router sends them.
   */
  reportBatch(report: BatchReport, nowMs: number): BatchAllotment[] {
    let b = this.batches.get(report.batchId);
    if (!b) {
      if (this.batches.size >= MAX_PLANNED_BATCHES) return [];
      this.batches.set(report.batchId, (b = { report, queued: new Map(), allot: [], seenAtMs: nowMs }));
    }
    b.report = report;
    b.seenAtMs = nowMs;
    const outstanding = new Map<ClassId, number>();
    for (const a of b.allot) outstanding.set(a.classId, (outstanding.get(a.classId) ?? 0) + a.lines);
    for (const [c, n] of Object.entries(report.pending) as Array<[ClassId, number]>) b.queued.set(c, Math.max(0, n - (outstanding.get(c) ?? 0)));
    for (const c of b.queued.keys()) if (report.pending[c] === undefined) b.queued.delete(c);
    if (this.slot?.unplanned) return Object.entries(report.pending).flatMap(([classId, lines]) => (lines > 0 ? [{ classId: classId as ClassId, site: null, lines, spareOnly: true }] : []));
    const hand = b.allot;
    b.allot = [];
    return hand;
  }

  dropBatch(batchId: string): void {
    this.batches.delete(batchId);
  }

  /** A flex request beyond the bounds (per key and in all, count and bytes), or null when the book may hold it. */
  refuses(hold: FlexHold, nowMs: number): FlexDecision | null {
    const mine = [...this.flex.values()].filter((f) => f.owner === hold.owner);
    const all = [...this.flex.values()];
    const bytes = (xs: FlexHold[]) => xs.reduce((n, f) => n + f.bytes, 0);
    const retryAfterS = (xs: FlexHold[]) => (xs.length === 0 ? 1 : Math.max(1, Math.ceil((Math.min(...xs.map((f) => f.deadlineMs)) - nowMs) / 1000)));
    if (mine.length >= FLEX_LIMITS.heldPerKey || bytes(mine) + hold.bytes > FLEX_LIMITS.heldBytesPerKey) return { kind: "full", why: `this API key already has ${mine.length} flex requests held (at most ${FLEX_LIMITS.heldPerKey}, ${FLEX_LIMITS.heldBytesPerKey} bytes)`, retryAfterS: retryAfterS(mine) };
    if (all.length >= FLEX_LIMITS.held || bytes(all) + hold.bytes > FLEX_LIMITS.heldBytes) return { kind: "full", why: `the edge already holds ${all.length} flex requests (at most ${FLEX_LIMITS.held}, ${FLEX_LIMITS.heldBytes} bytes)`, retryAfterS: retryAfterS(all) };
    return null;
  }

  /**
   * Plans one flex request that arrives mid-slot, alone, in the capacity the slot's plan leaves:
   * released now at a site, served at once (its deadline leaves no slot with room), or held (null)
   * until a later slot's plan releases it. The slot under way must be planned first.
   */
  admitFlex(hold: FlexHold, nowMs: number): FlexDecision | null {
    const slot = this.slot;
    if (!slot || slot.unplanned) return { kind: "serve-now", why: slot?.unplanned ?? "the scheduler has no plan" };
    if (hold.deadlineMs <= nowMs) return { kind: "serve-now", why: "its deadline has passed" };
    if (!slot.sites.some((s) => s.costs[hold.classId])) return { kind: "serve-now", why: `no site prices class ${hold.classId}` };
    const decisions = new Map<string, FlexDecision>();
    this.flex.set(hold.id, hold);
    const id = `flex:${hold.id}`;
    this.plan({ work: [{ id, classId: hold.classId, requests: 1, submittedAtMs: slot.grid.startMs, deadlineMs: hold.deadlineMs }], origins: new Map([[id, { flexId: hold.id }]]) }, { reserveLastSlot: false }, nowMs, decisions);
    return decisions.get(hold.id) ?? null;
  }

  dropFlex(id: string): void {
    this.flex.delete(id);
  }

  /** Held flex requests as backlog entries; those past their deadline or of a class no site prices are served at once. */
  private flexBacklog(grid: DeferralGrid, priced: ReadonlySet<string>, nowMs: number, decisions: Map<string, FlexDecision>): Backlog {
    const backlog: Backlog = { work: [], origins: new Map() };
    for (const [flexId, f] of this.flex) {
      if (f.deadlineMs <= nowMs || !priced.has(f.classId)) {
        decisions.set(flexId, { kind: "serve-now", why: f.deadlineMs <= nowMs ? "its deadline passed" : `no site prices class ${f.classId}` });
        this.flex.delete(flexId);
        continue;
      }
      backlog.origins.set(`flex:${flexId}`, { flexId });
      backlog.work.push({ id: `flex:${flexId}`, classId: f.classId, requests: 1, submittedAtMs: grid.startMs, deadlineMs: f.deadlineMs });
    }
    return backlog;
  }

  /** Batches' queued lines as backlog entries, one per (batch, class); a class no site prices runs spare-only anywhere, a batch past its deadline at once. */
  private batchBacklog(grid: DeferralGrid, priced: ReadonlySet<string>, nowMs: number): Backlog {
    const backlog: Backlog = { work: [], origins: new Map() };
    for (const [batchId, b] of this.batches) {
      for (const [classId, queued] of b.queued) {
        if (queued <= 0) continue;
        if (!priced.has(classId) || b.report.deadlineMs <= nowMs) {
          this.allot({ batchId, classId }, null, queued, !priced.has(classId));
          continue;
        }
        const id = `${batchId}:${classId}`;
        backlog.origins.set(id, { batchId, classId });
        backlog.work.push({ id, classId, requests: queued, submittedAtMs: grid.startMs, deadlineMs: this.plannedDeadline(b.report.deadlineMs, grid) });
      }
    }
    return backlog;
  }

  /** Plans a backlog in what the slot leaves (slot 0 as committed, later slots as planned), and takes what it commits and plans. */
  private plan(backlog: Backlog, options: DeferralModelOptions, nowMs: number, decisions: Map<string, FlexDecision>): void {
    const slot = this.slot!;
    if (backlog.work.length === 0) return;
    const sites = residualSites(slot.sites, slot.taken, slot.grid.slotMs / 1000);
    const out = releaseNow({ startMs: slot.grid.startMs, slotMs: slot.grid.slotMs, sites, backlog: backlog.work.slice(0, MAX_BACKLOG_ENTRIES) } satisfies DeferralInput, this.o.solver, options);
    slot.method = out.plan.method;
    slot.notes.push(...out.plan.notes);
    this.settle(out, backlog.origins, backlog.work, nowMs, decisions);
    takePlanned(slot.taken, out.plan.slots, slot.sites, 1);
  }

  /** Applies a release: batch lines to their allotments, flex requests to decisions; what starts now is taken from slot 0. */
  private settle(out: DeferralRelease, origins: ReadonlyMap<string, Origin>, backlog: readonly DeferrableWork[], nowMs: number, decisions: Map<string, FlexDecision>): void {
    const slot = this.slot!;
    const classOf = new Map(backlog.map((w) => [w.id, w.classId]));
    for (const r of out.release) {
      const origin = origins.get(r.workId)!;
      const s = slot.sites.findIndex((x) => x.site === r.site);
      take(slot.taken, 0, s, slot.sites[s]!.costs[classOf.get(r.workId)!]!, r.requests);
      if ("flexId" in origin) {
        decisions.set(origin.flexId, { kind: "release", site: r.site, heldMs: Math.max(0, nowMs - this.flex.get(origin.flexId)!.arrivedAtMs) });
        this.flex.delete(origin.flexId);
      } else this.allot(origin, r.site, r.requests, true);
    }
    for (const w of out.serveNow) {
      const origin = origins.get(w.workId)!;
      if ("flexId" in origin) {
        decisions.set(origin.flexId, { kind: "serve-now", why: "no spare capacity is left before its deadline" });
        this.flex.delete(origin.flexId);
      } else this.allot(origin, null, w.requests, false);
    }
  }

  private allot(origin: { batchId: string; classId: ClassId }, site: string | null, lines: number, spareOnly: boolean): void {
    const b = this.batches.get(origin.batchId)!;
    b.allot.push({ classId: origin.classId, site, lines, spareOnly });
    b.queued.set(origin.classId, Math.max(0, (b.queued.get(origin.classId) ?? 0) - lines));
  }

  /** A batch's deadline as planned: the last whole group of DEADLINE_GROUP_SLOTS slots before it (never later), or itself when that leaves no slot. */
  private plannedDeadline(deadlineMs: number, grid: DeferralGrid): number {
    const group = DEADLINE_GROUP_SLOTS * grid.slotMs;
    const rounded = grid.startMs + Math.floor((deadlineMs - grid.startMs) / group) * group;
    return rounded >= grid.startMs + 2 * grid.slotMs ? rounded : deadlineMs;
  }
}
