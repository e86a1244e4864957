import { describe, expect, it } from "vitest";
import { javascriptLpSolver } from "../../solver/javascript-lp-solver.ts";
import { FLEX_LIMITS, type FlexHold } from "../schemas/flex.ts";
import type { ClassId } from "../schemas/ids.ts";
import { DeferralBook } from "./deferral-book.ts";
import { SLOT_MS, site, T0 } from "./deferral.test-helper.ts";

const solver = javascriptLpSolver();
const MM = "MM" as ClassId;
const book = () => new DeferralBook({ slotMs: SLOT_MS, horizonSlots: 96, solver });
/** Slot k's start, and a moment inside it. */
const at = (k: number, into = 0) => T0 + k * SLOT_MS + into;
const flex = (id: string, deadlineSlot: number, over: Partial<FlexHold> = {}): FlexHold => ({ id, owner: "key", classId: MM, bytes: 100, arrivedAtMs: at(0, 1000), deadlineMs: at(deadlineSlot + 1), ...over });
/** A stretch of `slots` slots from slot `from` of a longer series (each replan sees the sites from the slot under way). */
const from = (k: number, slots: number, sites: ReturnType<typeof site>[]) => sites.map((s) => ({ ...s, carbonGPerKwh: s.carbonGPerKwh.slice(k, k + slots), spareGpus: s.spareGpus.slice(k, k + slots), spareW: s.spareW.slice(k, k + slots) }));
const pad = (xs: number[], n = 8) => [...xs, ...Array(n - xs.length).fill(xs.at(-1))];
/** Plans slot k (at its start) over the series' sites from there. */
const replanAt = (b: DeferralBook, k: number, truth: ReturnType<typeof site>[]) => {
  const grid = b.gridAt(at(k));
  return b.replan(grid, from(k, grid.slots, truth), at(k));
};

describe("DeferralBook", () => {
  it("hands a batch the lines its slot releases, and holds the rest for the cleaner slot", () => {
    // The wind farm runs 10 requests now and then nothing; the grid is dirty now and clean in slot 1.
    const truth = [site("grid", pad([400, 100, 300])), site("wind", pad([11]), pad([1, 0]))];
    const b = book();
    const report = { batchId: "b1", submittedAtMs: at(0), deadlineMs: at(3), pending: { MM: 15 } };
    b.reportBatch(report, at(0, 5));
    const grid = b.gridAt(at(0, 5));
    // To the latest deadline, and at least as far as a flex request may wait (an hour: 4 slots from now, into a fifth).
    expect(grid).toEqual({ startMs: at(0), slotMs: SLOT_MS, slots: 5 });
    b.replan(grid, from(0, grid.slots, truth), at(0, 5));
    expect(b.reportBatch(report, at(0, 5))).toEqual([{ classId: MM, site: "wind", lines: 10, spareOnly: true }]);
    // Handed once: the same slot gives nothing more.
    expect(b.reportBatch({ ...report, pending: { MM: 5 } }, at(0, 6))).toEqual([]);
    expect(b.planned(at(1))).toBe(false);
    replanAt(b, 1, truth);
    expect(b.reportBatch({ ...report, pending: { MM: 5 } }, at(1))).toEqual([{ classId: MM, site: "grid", lines: 5, spareOnly: true }]);
  });

  it("serves at once what its deadline gives no slot with room for", () => {
    const b = book();
    const report = { batchId: "b1", submittedAtMs: at(0), deadlineMs: at(1), pending: { MM: 12 } };
    b.reportBatch(report, at(0));
    replanAt(b, 0, [site("grid", pad([300]))]);
    expect(b.reportBatch(report, at(0))).toEqual([
      { classId: MM, site: "grid", lines: 10, spareOnly: true },
      { classId: MM, site: null, lines: 2, spareOnly: false },
    ]);
  });

  it("holds a flex request that arrives mid-slot for a cleaner slot within its deadline, and releases it there", () => {
    const truth = [site("grid", pad([300, 100]))];
    const b = book();
    replanAt(b, 0, truth);
    expect(b.admitFlex(flex("f1", 1), at(0, 1000))).toBeNull();
    expect(b.view.flexHeld).toBe(1);
    const decisions = replanAt(b, 1, truth);
    expect(decisions.get("f1")).toEqual({ kind: "release", site: "grid", heldMs: SLOT_MS - 1000 });
    expect(b.view.flexHeld).toBe(0);
  });

  it("plans a flex request around what the slot already gave batch work, and serves it at once when nothing is left before its deadline", () => {
    const b = book();
    const report = { batchId: "b1", submittedAtMs: at(0), deadlineMs: at(1), pending: { MM: 10 } };
    b.reportBatch(report, at(0));
    replanAt(b, 0, [site("grid", pad([300]))]);
    expect(b.reportBatch(report, at(0))).toEqual([{ classId: MM, site: "grid", lines: 10, spareOnly: true }]);
    expect(b.admitFlex(flex("due-now", 0), at(0, 1000))).toEqual({ kind: "serve-now", why: "no spare capacity is left before its deadline" });
    // With a later slot in reach it waits for that one instead.
    expect(b.admitFlex(flex("later", 1), at(0, 1000))).toBeNull();
  });

  it("refuses a flex request beyond a key's bound, with Retry-After until its earliest held deadline", () => {
    const b = book();
    replanAt(b, 0, [site("grid", pad([300, 100]), 0)]);
    for (let i = 0; i < FLEX_LIMITS.heldPerKey; i++) expect(b.admitFlex(flex(`f${i}`, 2), at(0, 1000))).toBeNull();
    expect(b.refuses(flex("one-more", 2), at(0, 1000))).toEqual({ kind: "full", why: expect.stringContaining(`${FLEX_LIMITS.heldPerKey} flex requests held`), retryAfterS: Math.ceil((3 * SLOT_MS - 1000) / 1000) });
    expect(b.refuses(flex("other-key", 2, { owner: "other" }), at(0, 1000))).toBeNull();
  });

  it("leaves out of the plan a batch silent for two slots (one waiting out its carbon budget), until its next turn", () => {
    const truth = [site("grid", pad([300], 12))];
    const b = book();
    const report = { batchId: "b1", submittedAtMs: at(0), deadlineMs: at(96), pending: { MM: 5 } };
    b.reportBatch(report, at(0));
    replanAt(b, 0, truth);
    expect(b.view.batches).toBe(1);
    replanAt(b, 3, truth);
    expect(b.view.batches).toBe(0);
    expect(b.knows("b1")).toBe(false);
    b.reportBatch(report, at(3, 10));
    expect(b.knows("b1")).toBe(true);
  });

  it("runs work as it comes when the slot cannot be planned: batches spare-only anywhere, flex at once", () => {
    const b = book();
    b.admitFlex(flex("f1", 2), at(0)); // no plan yet: served at once
    const report = { batchId: "b1", submittedAtMs: at(0), deadlineMs: at(90), pending: { MM: 7 } };
    b.reportBatch(report, at(0));
    b.unplanned(b.gridAt(at(0)), "no profile table");
    expect(b.reportBatch(report, at(0))).toEqual([{ classId: MM, site: null, lines: 7, spareOnly: true }]);
    expect(b.admitFlex(flex("f2", 2), at(0))).toEqual({ kind: "serve-now", why: "no profile table" });
  });
});
