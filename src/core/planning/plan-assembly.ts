import type { PolicyKind } from "../schemas/fleet.ts";
import type { ClassId, GpuType, InstanceId, SiteId, VariantId } from "../schemas/ids.ts";
import type { ClockSetting, Plan, PlannedInstance, RouteTarget } from "../schemas/plan.ts";
import { placeEntries, type PlacedEntry } from "./gpu-placement.ts";
import { siteInstances } from "./plan-reading.ts";
import type { PlanningInput } from "./planning-input.ts";
import { gpuRanges, gpuTypeAt } from "./site-gpus.ts";
import { routedPlan } from "./routed-plan.ts";

/** `count` instances of one (site, GPU type, class, TP) locked at `mhz`, each planned for `loadRps`. */
export interface Allocation {
  site: number;
  gpu: GpuType;
  classId: ClassId;
  tp: number;
  mhz: number;
  /** The load level of the chosen profile point: what one instance can serve within its SLO. */
  loadRps: number;
  count: number;
  /** The model variant served (default: the input's); another variant's entries get its name in their id. */
  variant?: VariantId;
  /** How the clock is set (default: locked at `mhz`), e.g. a frequency policy with bounds around `mhz`. */
  clock?: ClockSetting;
  /**
   * Load all `count` instances serve per class, set by a planner that routes itself (e.g. other
   * classes spilled onto these instances); default: the class's demand spread over its
   * allocations in proportion to capacity.
   */
  serves?: Readonly<Record<string, number>>;
}

export interface AssemblyOptions {
  policy?: PolicyKind;
  notes?: readonly string[];
  /**
   * Demand per [site][class] when routing splits each class over sites beforehand (WRR by
   * capacity): a site then serves at most its share, and what it cannot serve is shortfall, not
   * sent elsewhere. Without it, a class's demand goes to all its entries in proportion to capacity.
   */
  siteDemandRps?: readonly (readonly number[])[];
  /**
   * Largest entry (default 16 replicas): a larger allocation becomes entries "MM-tp8", "MM-tp8#1",
   * ... of this many replicas (the last one smaller), so a Planner-S delta, which sets one clock
   * per entry, can move part of a group to another clock or idle it. Ids stay stable as counts change.
   */
  maxReplicasPerEntry?: number;
}

/**
 * The id of a (class, TP[, GPU type]) entry at a site, e.g. "MM-tp8": stable across plans, so
 * replicas that stay keep running.
 */
export function entryId(classId: ClassId, tp: number, gpu: GpuType, typesAtSite: number): InstanceId {
  return (typesAtSite > 1 ? `${classId}-tp${tp}-${gpu}` : `${classId}-tp${tp}`) as InstanceId;
}

/**
 * Turns a planner's allocations into a `Plan`: entries of up to `maxReplicasPerEntry` replicas, with
 * GPU indices (kept where the plan in force had the same entry, see `placeEntries`), a locked
 * clock, and the load the entry is expected to serve: its class's demand spread over the class's
 * entries in proportion to their capacity (never above it; see `siteDemandRps` for fixed site shares). That load is the entry's routing
 * weight, so weighted round robin per class sends each entry what the plan expects (Heron's
 * Request Scheduler). Demand beyond what the allocations serve is reported as shortfall. Sites
 * without power get a nominal 1 W cap (a plan's caps are positive) and, from the planners, no
 * instances.
 */
export function assemblePlan(input: PlanningInput, allocations: readonly Allocation[], o: AssemblyOptions = {}): Plan {
  const capacity = new Map<string, number>();
  const key = (a: Allocation) => (o.siteDemandRps ? `${a.site}|${a.classId}` : a.classId);
  for (const a of allocations) capacity.set(key(a), (capacity.get(key(a)) ?? 0) + a.count * a.loadRps);
  const classIdx = new Map<string, number>(input.classes.map((c, i) => [c.id, i]));
  const demandOf = (a: Allocation) => (o.siteDemandRps ? (o.siteDemandRps[a.site]?.[classIdx.get(a.classId)!] ?? 0) : (input.classes[classIdx.get(a.classId)!]?.demandRps ?? 0));
  const scaleOf = (a: Allocation) => Math.min(1, demandOf(a) / Math.max(capacity.get(key(a)) ?? 0, 1e-12));
  const routing: Record<string, RouteTarget[]> = {};
  const served = new Map<string, number>();
  const notes = [...(o.notes ?? [])];
  const sites = input.sites.map((site, si) => {
    const ranges = gpuRanges(site.gpus);
    const merged = mergeAllocations(allocations.filter((a) => a.site === si && a.count > 0));
    const mergedIds = entryIds(merged, site.gpus.length, input.variant);
    const chunked = merged.flatMap((a, i) => chunkSizes(a.count, o.maxReplicasPerEntry ?? 16).map((count, k) => ({ a: { ...a, count, ...(a.serves ? { serves: scaled(a.serves, count / a.count) } : {}) }, id: (k === 0 ? mergedIds[i]! : `${mergedIds[i]!}#${k}`) as InstanceId })));
    const mine = chunked.map((x) => x.a);
    const ids = chunked.map((x) => x.id);
    const previous: PlacedEntry[] = siteInstances(input.previous, site.id).flatMap((e) => {
      const type = gpuTypeAt(ranges, e.gpus[0] ?? -1);
      return type ? [{ id: e.id, type, tp: e.tp, gpus: e.gpus }] : [];
    });
    const placed = placeEntries(ranges, mine.map((a, i) => ({ id: ids[i]!, type: a.gpu, tp: a.tp, replicas: a.count })), previous);
    if (!placed) notes.push(`site ${site.id}: allocations exceed its GPUs; nothing planned there`);
    const instances: PlannedInstance[] = placed
      ? mine.map((a, i) => {
          const loads = Object.entries(a.serves ?? { [a.classId]: a.count * a.loadRps * scaleOf(a) }).filter(([, rps]) => rps > 0);
          for (const [c, load] of loads) {
            (routing[c] ??= []).push({ site: site.id as SiteId, instance: ids[i]!, weight: load });
            served.set(c, (served.get(c) ?? 0) + load);
          }
          const guests = loads.some(([c]) => c !== a.classId);
          return { id: ids[i]!, model: input.model, variant: a.variant ?? input.variant, tp: a.tp, replicas: a.count, gpus: placed[i]!, role: "mixed", clock: a.clock ?? { mode: "locked", mhz: a.mhz }, loadRps: Object.fromEntries(loads) as Record<ClassId, number>, ...(guests ? { sizedFor: a.classId } : {}) };
        })
      : [];
    return { site: site.id, powerCapW: Math.max(1, site.powerW), instances };
  });
  return routedPlan(input, { policy: o.policy ?? "heron", sites, routing, served, notes });
}

/** Sizes of the entries `count` replicas are split into: full chunks of `max`, then the rest. */
function chunkSizes(count: number, max: number): number[] {
  const size = Math.max(1, Math.floor(max));
  return Array.from({ length: Math.ceil(count / size) }, (_, k) => Math.min(size, count - k * size));
}

/** Merges allocations of the same operating point; a group normally has one (Heron: one (clock, load) per (site, class, TP)). */
function mergeAllocations(allocations: readonly Allocation[]): Allocation[] {
  const out: Allocation[] = [];
  for (const a of allocations) {
    const same = out.find((b) => b.gpu === a.gpu && b.classId === a.classId && b.tp === a.tp && b.variant === a.variant && b.mhz === a.mhz && b.loadRps === a.loadRps);
    if (!same) out.push({ ...a });
    else {
      if (same.serves || a.serves) same.serves = added(same.serves ?? {}, a.serves ?? {});
      same.count += a.count;
    }
  }
  return out;
}

function scaled(rates: Readonly<Record<string, number>>, f: number): Record<string, number> {
  return Object.fromEntries(Object.entries(rates).map(([c, x]) => [c, x * f]));
}

function added(a: Readonly<Record<string, number>>, b: Readonly<Record<string, number>>): Record<string, number> {
  const out = { ...a };
  for (const [c, x] of Object.entries(b)) out[c] = (out[c] ?? 0) + x;
  return out;
}

/** Entry ids of a site's allocations; a second operating point of one (class, TP, variant) gets a suffix. */
function entryIds(mine: readonly Allocation[], typesAtSite: number, defaultVariant: string): InstanceId[] {
  const seen = new Map<string, number>();
  return mine.map((a) => {
    const id = entryId(a.classId, a.tp, a.gpu, typesAtSite);
    const base = a.variant === undefined || a.variant === defaultVariant ? id : `${id}-${a.variant}`;
    const n = (seen.get(base) ?? 0) + 1;
    seen.set(base, n);
    return (n === 1 ? base : `${base}-${n}`) as InstanceId;
  });
}
