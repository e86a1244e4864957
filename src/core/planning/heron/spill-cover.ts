/**
 * A class whose demand may run on the instances planned for another class (`to`) that dominates
 * it (input and output bins at least as long), one request of `from` counted as one request of
 * `to`'s capacity. Only `to`'s capacity within its SLO, at points where `from` meets its own SLO
 * (`OperatingOption.guests`, `ClassCapacity.byGuests`), hosts spilled load.
 */
export interface SpillEdge {
  from: number;
  to: number;
}

/** Capacity of a plan per class, req/s of the class: at points within its SLO and at points that miss it. */
export interface ClassCapacity {
  inSlo: number[];
  outside: number[];
  /**
   * Per class, its capacity within the SLO split by which guest classes meet their own SLO on it
   * (keys from `guestKey`, summing to `inSlo`); a class without an entry admits every guest on
   * all of it. A guest's SLO is tighter than its host's (a multiple of its own isolated latency),
   * so a host point within the host's SLO need not be within the guest's.
   */
  byGuests?: (Record<string, number> | undefined)[];
}

/** How a plan's capacity serves each class's demand. */
export interface Cover {
  /** Per class, req/s served on its own instances within the SLO. */
  ownInSlo: number[];
  /** Per class, req/s served on its own instances at points that miss the SLO. */
  ownOutside: number[];
  /** Per spill edge, req/s of `from` served on `to`'s instances. */
  spilled: number[];
  /** Per class, req/s left unserved. */
  unserved: number[];
  /**
   * Capacity within the SLO per class and guest key (`ClassCapacity.byGuests`; "*" for a class
   * without one): its req/s, its own class's load on it and, per spill edge, the guest load on
   * it. A class's own load is spread over its pieces in proportion to the room guests leave.
   */
  pieces: CoverPiece[];
}

export interface CoverPiece {
  classIdx: number;
  key: string;
  capacityRps: number;
  own: number;
  spilled: number[];
}

const EPS = 1e-9;
const ALL = "*";

/**
 * The key of a piece of capacity that admits `guests` (class indices; undefined: every guest).
 *
 * @example
 * guestKey([2, 0]); // "0,2"
 */
export function guestKey(guests: readonly number[] | undefined): string {
  return guests === undefined ? ALL : [...guests].sort((a, b) => a - b).join(",");
}

function admits(key: string, guest: number): boolean {
  return key === ALL || key.split(",").includes(String(guest));
}

/** An arc from a class's demand to a capacity node: own within the SLO (-1), a spill edge (its index) or own outside the SLO (-2). */
type Arc = { node: number; edge: number };

/**
 * The most demand `capacity` can serve (a maximum flow from classes' demand to capacity, through
 * own instances and `edges`, a guest only onto pieces of its host that admit it): each class
 * first on its own instances within the SLO, then, as shortest augmenting paths find room,
 * spilled to hosts (edges in their order) before its own instances outside the SLO. Without edges
 * every class gets min(demand, capacity). Deterministic.
 *
 * @example
 * coverDemand([1, 3], { inSlo: [0, 5], outside: [0, 0] }, [{ from: 0, to: 1 }]).unserved; // [0, 0]
 */
export function coverDemand(demand: readonly number[], capacity: ClassCapacity, edges: readonly SpillEdge[]): Cover {
  // Capacity nodes: the pieces within the SLO, then one outside the SLO per class.
  const pieces = demand.flatMap((_, c) => {
    const split = capacity.byGuests?.[c];
    if (!split) return [{ classIdx: c, key: ALL, capacityRps: capacity.inSlo[c] ?? 0 }];
    return Object.keys(split).sort().map((key) => ({ classIdx: c, key, capacityRps: split[key]! }));
  });
  const caps = [...pieces.map((p) => p.capacityRps), ...demand.map((_, c) => capacity.outside[c] ?? 0)];
  const arcs: Arc[][] = demand.map((_, c) => [
    ...pieces.flatMap((p, node) => (p.classIdx === c ? [{ node, edge: -1 }] : [])),
    ...edges.flatMap((e, i) => (e.from === c ? pieces.flatMap((p, node) => (p.classIdx === e.to && admits(p.key, c) ? [{ node, edge: i }] : [])) : [])),
    { node: pieces.length + c, edge: -2 },
  ]);
  const flow = arcs.map((list) => list.map(() => 0));
  const into = caps.map(() => [] as { c: number; j: number }[]);
  arcs.forEach((list, c) => list.forEach((a, j) => into[a.node]!.push({ c, j })));
  const used = (node: number) => into[node]!.reduce((s, { c, j }) => s + flow[c]![j]!, 0);
  const room = (node: number) => caps[node]! - used(node);
  const left = (c: number) => demand[c]! - flow[c]!.reduce((a, b) => a + b, 0);
  // Own capacity within the SLO first; with edges, load outside it is only placed by augmenting paths, after spilling.
  arcs.forEach((list, c) =>
    list.forEach((a, j) => {
      if (a.edge === -1 || (a.edge === -2 && edges.length === 0)) flow[c]![j] = Math.max(0, Math.min(left(c), room(a.node)));
    }),
  );
  if (edges.length > 0) {
    const scale = Math.max(1, ...demand);
    const arcCount = arcs.reduce((s, l) => s + l.length, 0);
    for (let guard = 0; guard < 4 * (caps.length + arcCount) ** 2; guard++) {
      const path = augmentingPath(arcs, into, flow, room, left, EPS * scale);
      if (!path) break;
      for (const step of path.steps) flow[step.c]![step.j]! += step.sign * path.amount;
    }
  }
  const sumOn = (c: number, pick: (a: Arc) => boolean) => arcs[c]!.reduce((s, a, j) => s + (pick(a) ? flow[c]![j]! : 0), 0);
  const out: CoverPiece[] = pieces.map((p) => ({ ...p, own: 0, spilled: edges.map(() => 0) }));
  arcs.forEach((list, c) => list.forEach((a, j) => { if (a.edge >= 0) out[a.node]!.spilled[a.edge]! += flow[c]![j]!; }));
  demand.forEach((_, c) => {
    // Spread the class's own load over its pieces in proportion to the room its guests leave (never over a piece's capacity).
    const mine = out.filter((p) => p.classIdx === c);
    const rooms = mine.map((p) => Math.max(0, p.capacityRps - p.spilled.reduce((a, b) => a + b, 0)));
    const total = rooms.reduce((a, b) => a + b, 0);
    const own = sumOn(c, (a) => a.edge === -1);
    mine.forEach((p, i) => (p.own = total > 0 ? (own * rooms[i]!) / total : 0));
  });
  return {
    ownInSlo: demand.map((_, c) => sumOn(c, (a) => a.edge === -1)),
    ownOutside: demand.map((_, c) => sumOn(c, (a) => a.edge === -2)),
    spilled: edges.map((_, i) => out.reduce((s, p) => s + p.spilled[i]!, 0)),
    unserved: demand.map((_, c) => Math.max(0, left(c))),
    pieces: out,
  };
}

type Step = { c: number; j: number; sign: 1 | -1 };

/** A shortest path from a class with demand left to capacity with room, alternating forward and backward arcs. */
function augmentingPath(
  arcs: readonly Arc[][],
  into: readonly { c: number; j: number }[][],
  flow: readonly number[][],
  room: (node: number) => number,
  left: (c: number) => number,
  eps: number,
): { steps: Step[]; amount: number } | undefined {
  // A node is reached from the class whose forward arc leads to it; a class from the node it gives up load on.
  const reachedBy = new Map<number, { c: number; j: number }>();
  const classFrom = new Map<number, { node: number; j: number } | null>();
  const queue: number[] = [];
  arcs.forEach((_, c) => {
    if (left(c) <= eps) return;
    classFrom.set(c, null);
    queue.push(c);
  });
  while (queue.length > 0) {
    const c = queue.shift()!;
    for (const [j, arc] of arcs[c]!.entries()) {
      if (reachedBy.has(arc.node)) continue;
      reachedBy.set(arc.node, { c, j });
      if (room(arc.node) > eps) return trace(arc.node, reachedBy, classFrom, flow, room, left);
      // Push back a class that uses this capacity, so it can move elsewhere.
      for (const back of into[arc.node]!) {
        if (classFrom.has(back.c) || flow[back.c]![back.j]! <= eps) continue;
        classFrom.set(back.c, { node: arc.node, j: back.j });
        queue.push(back.c);
      }
    }
  }
  return undefined;
}

function trace(
  end: number,
  reachedBy: ReadonlyMap<number, { c: number; j: number }>,
  classFrom: ReadonlyMap<number, { node: number; j: number } | null>,
  flow: readonly number[][],
  room: (node: number) => number,
  left: (c: number) => number,
): { steps: Step[]; amount: number } {
  const steps: Step[] = [];
  let amount = room(end);
  let node = end;
  for (;;) {
    const at = reachedBy.get(node)!;
    steps.push({ c: at.c, j: at.j, sign: 1 });
    const from = classFrom.get(at.c);
    if (!from) {
      amount = Math.min(amount, left(at.c));
      break;
    }
    steps.push({ c: at.c, j: from.j, sign: -1 });
    amount = Math.min(amount, flow[at.c]![from.j]!);
    node = from.node;
  }
  return { steps, amount };
}
