import { interpolateAtLoad } from "../../profiling/profile-lookup.ts";
import type { ProfileRow } from "../../schemas/profile.ts";
import type { Slo } from "../../schemas/request-class.ts";
import type { ClassCapacity, Cover, SpillEdge } from "../heron/spill-cover.ts";
import { outsideSlo, type OptionSet } from "../operating-options.ts";
import { meetsSlo } from "../slo.ts";

type Binned = { inputBin: number; outputBin: number };

/** Whether class `host` dominates class `guest`: another class with input and output bins at least as long. */
function dominates(classes: readonly Binned[], host: number, guest: number): boolean {
  return host !== guest && classes[host]!.inputBin >= classes[guest]!.inputBin && classes[host]!.outputBin >= classes[guest]!.outputBin;
}

/**
 * Where each class's demand may spill: onto the instances of every other class that dominates it
 * (input and output bins at least as long; DynamoLLM §IV-B, "Handling fragmentation", moves a
 * pool's leftover load to the pool of the next larger type), at the host's points where the
 * guest meets its own SLO (`withGuests`), which the LP and the cover enforce per point. Only
 * between classes that have points within their SLO (`withinSlo`). Per class, nearest hosts
 * first (fewest bins longer), then in class order.
 *
 * @example
 * spillEdges([{ inputBin: 0, outputBin: 0 }, { inputBin: 1, outputBin: 0 }], [true, true]); // [{ from: 0, to: 1 }]
 */
export function spillEdges(classes: readonly Binned[], withinSlo: readonly boolean[]): SpillEdge[] {
  const distance = (c: number, h: number) => classes[h]!.inputBin - classes[c]!.inputBin + classes[h]!.outputBin - classes[c]!.outputBin;
  return classes.flatMap((_, from) =>
    !withinSlo[from]
      ? []
      : classes
          .map((_, to) => to)
          .filter((to) => withinSlo[to] && dominates(classes, to, from))
          .sort((a, b) => distance(from, a) - distance(from, b) || a - b)
          .map((to) => ({ from, to })),
  );
}

/**
 * The option sets with each option within its class's SLO told which dominated classes
 * (`OperatingOption.guests`, indices into `classes`) meet their own SLO when spilled onto an
 * instance there. Per-class SLOs are multiples of each class's own isolated latency, so a short
 * class's SLO is tighter than its host's: a host point within the host's SLO says nothing of the
 * guest's. As DynamoLLM checks a pool's mix (§IV-B; `mixedLoad`, the reading the fleet simulator
 * uses), the guest is read on its own profile curve at the same (GPU, TP, clock) at the
 * instance's busy-ness (the option's load over the host curve's capacity, its highest stable
 * load: spilled requests, counted as host requests, make it no busier); without a curve of its
 * own there, on the host's point (a shorter request waits no longer for its first token or
 * between tokens). Options outside the SLO host nobody.
 *
 * @example
 * withGuests(sets, rows, { model: "llama2-70b", classes }); // an LL TP8 option at 1980 MHz: guests [0, 3] (SS, MS)
 */
export function withGuests(sets: readonly OptionSet[], rows: readonly ProfileRow[], o: { model: string; classes: readonly (Binned & { id: string; slo: Slo })[] }): OptionSet[] {
  const curves = new Map<string, ProfileRow[]>();
  for (const r of rows) {
    if (r.model !== o.model) continue;
    const key = curveKey(r.variant, r.gpu, r.classId, r.tp, r.mhz);
    (curves.get(key) ?? curves.set(key, []).get(key)!).push(r);
  }
  const classIdx = new Map(o.classes.map((c, i) => [c.id, i]));
  return sets.map((set) => {
    const host = classIdx.get(set.classId);
    if (host === undefined) return set;
    const candidates = o.classes.map((_, i) => i).filter((g) => dominates(o.classes, host, g));
    const options = set.options.map((opt) => {
      if (outsideSlo(opt)) return { ...opt, guests: [] };
      const hostCurve = curves.get(curveKey(set.variant, set.gpu, set.classId, set.tp, opt.mhz)) ?? [];
      const busy = hostCurve.length > 0 ? opt.loadRps / capacityOf(hostCurve) : Infinity;
      const guests = candidates.filter((g) => {
        const slo = o.classes[g]!.slo;
        const own = curves.get(curveKey(set.variant, set.gpu, o.classes[g]!.id, set.tp, opt.mhz));
        if (own && own.length > 0) {
          const load = busy * capacityOf(own);
          return load <= Math.max(...own.map((r) => r.loadRps)) * (1 + 1e-9) && meetsSlo(interpolateAtLoad(own, load), slo);
        }
        return hostCurve.length > 0 && meetsSlo(interpolateAtLoad(hostCurve, opt.loadRps), slo);
      });
      return { ...opt, guests };
    });
    return { ...set, options };
  });
}

function curveKey(variant: string, gpu: string, classId: string, tp: number, mhz: number): string {
  return `${variant}|${gpu}|${classId}|${tp}|${mhz}`;
}

/** Highest stable profiled load of a curve (its highest load where none is stable), as `mixedLoad` reads capacity. */
function capacityOf(rows: readonly ProfileRow[]): number {
  const stable = rows.filter((r) => r.stable && r.loadRps > 0);
  return Math.max(0, ...(stable.length > 0 ? stable : rows).map((r) => r.loadRps));
}

/** One allocation of an integer plan as the split needs it: its class, capacity in req/s of the class, whether it misses the SLO and, within it, its guest key (`guestKey`). */
export interface CapacityShare {
  classIdx: number;
  capacityRps: number;
  outside: boolean;
  key: string;
}

/**
 * Per allocation, the load it serves per class from a `cover` of the plan's `capacity`: outside
 * the SLO, its class's load there in proportion to capacity; within it, its share of its piece
 * (class and guests admitted: `Cover.pieces`), own load and what spills onto it. Keys are class
 * ids. Weighted round robin over these loads sends each class where the plan expects it.
 *
 * @example
 * servedLoads(shares, capacity, cover, edges, ["SS", "LL"]); // [{ SS: 1.2 }, { LL: 0.4, SS: 0.1 }]
 */
export function servedLoads(shares: readonly CapacityShare[], capacity: ClassCapacity, cover: Cover, edges: readonly SpillEdge[], classIds: readonly string[]): Record<string, number>[] {
  return shares.map((a) => {
    const id = classIds[a.classIdx]!;
    if (a.outside) {
      const pool = capacity.outside[a.classIdx]!;
      return { [id]: pool > 0 ? (cover.ownOutside[a.classIdx]! * a.capacityRps) / pool : 0 };
    }
    const piece = cover.pieces.find((p) => p.classIdx === a.classIdx && p.key === a.key);
    const share = piece && piece.capacityRps > 0 ? a.capacityRps / piece.capacityRps : 0;
    const out: Record<string, number> = { [id]: (piece?.own ?? 0) * share };
    edges.forEach((e, i) => {
      const spilled = piece?.spilled[i] ?? 0;
      if (spilled > 0) out[classIds[e.from]!] = (out[classIds[e.from]!] ?? 0) + spilled * share;
    });
    return out;
  });
}
