import { GpuType, type ClassId } from "../../schemas/ids.ts";
import type { ClockSetting, Plan } from "../../schemas/plan.ts";
import { siteInstances } from "../plan-reading.ts";

/** What one cluster runs for a pool: `count` identical instances, and the load they serve together. */
export interface PoolEntry {
  /** The pool's class, or "all" for SinglePool's one pool. */
  pool: string;
  tp: number;
  count: number;
  /** Load one instance may take: its profile level, req/s of the pool's class. */
  levelRps: number;
  clock: ClockSetting;
  /** req/s per origin class served by all `count` instances (a pool also serves what smaller pools spilled). */
  loads: Partial<Record<string, number>>;
}

const ENTRY_ID = new RegExp(`^(.+)-tp(\\d+)(?:-(${GpuType.options.join("|")}))?$`);

/** The pool and GPU type of an entry id made by `entryId` ("MM-tp4", "MM-tp4-A100-80GB"). */
export function parseEntryId(id: string): { pool: string; gpu?: GpuType } | undefined {
  const m = ENTRY_ID.exec(id);
  if (!m) return undefined;
  return m[3] ? { pool: m[1]!, gpu: m[3] as GpuType } : { pool: m[1]! };
}

/**
 * Instances per TP of every pool in the plan in force at a site (of one GPU type when the site
 * has several), read from DynamoLLM's entry ids: the pool managers' layouts in force.
 */
export function currentLayouts(previous: Plan | undefined, site: string, gpu: GpuType | undefined): Map<string, Record<number, number>> {
  const layouts = new Map<string, Record<number, number>>();
  if (previous?.policy !== "dynamollm") return layouts;
  for (const inst of siteInstances(previous, site)) {
    const parsed = parseEntryId(inst.id);
    if (!parsed || (gpu !== undefined && parsed.gpu !== gpu)) continue;
    const counts = layouts.get(parsed.pool) ?? {};
    counts[inst.tp] = (counts[inst.tp] ?? 0) + inst.replicas;
    layouts.set(parsed.pool, counts);
  }
  return layouts;
}

/**
 * Spreads a pool's load per origin class over its entries in proportion to their capacity
 * (count x level, as DynamoLLM gives instances a fair share); what exceeds the capacity stays
 * unserved. `loadEq` is the pool's load in its own class's req/s.
 */
export function spreadLoads(entries: readonly Omit<PoolEntry, "loads">[], loads: Partial<Record<string, number>>, loadEq: number): PoolEntry[] {
  const capacity = entries.reduce((s, e) => s + e.count * e.levelRps, 0);
  const served = loadEq > 0 ? Math.min(1, capacity / loadEq) : 0;
  return entries.map((e) => {
    const share = capacity > 0 ? (e.count * e.levelRps) / capacity : 0;
    const mine: Partial<Record<string, number>> = {};
    for (const [c, rps] of Object.entries(loads) as [ClassId, number][]) if (rps * served * share > 0) mine[c] = rps * served * share;
    return { ...e, loads: mine };
  });
}
