import type { ClassId } from "../schemas/ids.ts";
import type { BatchAllotment } from "./deferral-book.ts";

/** Lines a batch runs at once in one round (the next round follows at once while its slot has more). */
export const MAX_LINES_PER_ROUND = 16;

/** One line to run this round, and how: at the allotment's site (or anywhere), spare-only or as interactive traffic. */
export interface LinePick {
  index: number;
  site: string | null;
  spareOnly: boolean;
}

/**
 * The lines of this round: lines with no class first (they only produce an error line), then, per
 * allotment in order, pending lines of its class, lowest index first, each line once, at most
 * MAX_LINES_PER_ROUND in all. What is picked is taken off the allotments (mutated): a line that
 * finds no room stays pending and is reported again at the batch's next turn.
 *
 * @example
 * pickLines([0, 1, 2], (i) => "SS", [{ classId: "SS", site: "wind-a", lines: 2, spareOnly: true }]);
 * // [{ index: 0, site: "wind-a", spareOnly: true }, { index: 1, site: "wind-a", spareOnly: true }]
 */
export function pickLines(pending: readonly number[], classOf: (i: number) => ClassId | null, allotments: BatchAllotment[]): LinePick[] {
  const picks: LinePick[] = [];
  const taken = new Set<number>();
  for (const i of pending) {
    if (picks.length >= MAX_LINES_PER_ROUND) return picks;
    if (classOf(i) !== null) continue;
    picks.push({ index: i, site: null, spareOnly: true });
    taken.add(i);
  }
  for (const a of allotments) {
    for (const i of pending) {
      if (picks.length >= MAX_LINES_PER_ROUND || a.lines <= 0) break;
      if (taken.has(i) || classOf(i) !== a.classId) continue;
      picks.push({ index: i, site: a.site, spareOnly: a.spareOnly });
      taken.add(i);
      a.lines--;
    }
  }
  return picks;
}

/** Pending lines by class, as the scheduler takes a batch's report (lines with no class left out). */
export function pendingByClass(pending: readonly number[], classOf: (i: number) => ClassId | null): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const i of pending) {
    const c = classOf(i);
    if (c !== null) counts[c] = (counts[c] ?? 0) + 1;
  }
  return counts;
}
