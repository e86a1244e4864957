import type { ClassCapacity, Cover, SpillEdge } from "../heron/spill-cover.ts";

/**
 * Where each class's demand may spill: onto the instances of every other class that dominates it
 * (input and output bins at least as long: a shorter request on an instance sized for longer ones
 * meets its SLO conservatively; DynamoLLM §IV-B, "Handling fragmentation", moves a pool's
 * leftover load to the pool of the next larger type). Only between classes that have points
 * within their SLO (`withinSlo`): a class with none gets no such guarantee from a host. Per
 * class, nearest hosts first (fewest bins longer), then in class order.
 *
 * @example
 * spillEdges([{ inputBin: 0, outputBin: 0 }, { inputBin: 1, outputBin: 0 }], [true, true]); // [{ from: 0, to: 1 }]
 */
export function spillEdges(classes: readonly { inputBin: number; outputBin: number }[], withinSlo: readonly boolean[]): SpillEdge[] {
  const distance = (c: number, h: number) => classes[h]!.inputBin - classes[c]!.inputBin + classes[h]!.outputBin - classes[c]!.outputBin;
  return classes.flatMap((c, from) =>
    !withinSlo[from]
      ? []
      : classes
          .map((_, to) => to)
          .filter((to) => to !== from && withinSlo[to] && classes[to]!.inputBin >= c.inputBin && classes[to]!.outputBin >= c.outputBin)
          .sort((a, b) => distance(from, a) - distance(from, b) || a - b)
          .map((to) => ({ from, to })),
  );
}

/** One allocation of an integer plan as the split needs it: its class, capacity in req/s of the class, and whether it misses the SLO. */
export interface CapacityShare {
  classIdx: number;
  capacityRps: number;
  outside: boolean;
}

/**
 * Per allocation, the load it serves per class from a `cover` of the plan's `capacity`: each class
 * its own load in proportion to capacity (within the SLO over its allocations within it, outside
 * over those outside), and an allocation within the SLO also its share of what spills onto its
 * class. Keys are class ids. Weighted round robin over these loads sends each class where the
 * plan expects it.
 *
 * @example
 * servedLoads(shares, capacity, cover, edges, ["SS", "LL"]); // [{ SS: 1.2 }, { LL: 0.4, SS: 0.1 }]
 */
export function servedLoads(shares: readonly CapacityShare[], capacity: ClassCapacity, cover: Cover, edges: readonly SpillEdge[], classIds: readonly string[]): Record<string, number>[] {
  return shares.map((a) => {
    const pool = a.outside ? capacity.outside[a.classIdx]! : capacity.inSlo[a.classIdx]!;
    const share = pool > 0 ? a.capacityRps / pool : 0;
    const own = (a.outside ? cover.ownOutside : cover.ownInSlo)[a.classIdx]! * share;
    const out: Record<string, number> = { [classIds[a.classIdx]!]: own };
    if (!a.outside) edges.forEach((e, i) => {
      if (e.to === a.classIdx && cover.spilled[i]! > 0) out[classIds[e.from]!] = (out[classIds[e.from]!] ?? 0) + cover.spilled[i]! * share;
    });
    return out;
  });
}
