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

/**
 * The flow network of a cover, as flat arrays (a cover runs thousands of times per plan in
 * rounding's trim). Arcs are numbered class by class; each class's arcs go to its own pieces within
 * the SLO, then per spill edge to the host's pieces that admit it, then to its own capacity outside
 * the SLO. `edge` is -1 for own within the SLO, the spill edge's index, or -2 for own outside it.
 */
interface Network {
  caps: Float64Array;
  arcStart: Int32Array;
  arcNode: Int32Array;
  arcEdge: Int32Array;
  /** The class each arc leaves from. */
  arcClass: Int32Array;
  /** The arcs into each node, in arc order: `inArcs[inStart[n]..inStart[n + 1]]`. */
  inStart: Int32Array;
  inArcs: Int32Array;
}

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
  const { pieces, net, flow, servedOf } = maxFlow(demand, capacity, edges);
  const out: CoverPiece[] = pieces.map((p) => ({ ...p, own: 0, spilled: edges.map(() => 0) }));
  const ownInSlo = demand.map(() => 0);
  const ownOutside = demand.map(() => 0);
  for (let c = 0; c < demand.length; c++) {
    for (let a = net.arcStart[c]!; a < net.arcStart[c + 1]!; a++) {
      const e = net.arcEdge[a]!;
      if (e >= 0) out[net.arcNode[a]!]!.spilled[e]! += flow[a]!;
      else if (e === -1) ownInSlo[c]! += flow[a]!;
      else ownOutside[c]! += flow[a]!;
    }
  }
  demand.forEach((_, c) => {
    // Spread the class's own load over its pieces in proportion to the room its guests leave (never over a piece's capacity).
    const mine = out.filter((p) => p.classIdx === c);
    const rooms = mine.map((p) => Math.max(0, p.capacityRps - p.spilled.reduce((a, b) => a + b, 0)));
    const total = rooms.reduce((a, b) => a + b, 0);
    mine.forEach((p, i) => (p.own = total > 0 ? (ownInSlo[c]! * rooms[i]!) / total : 0));
  });
  return {
    ownInSlo,
    ownOutside,
    spilled: edges.map((_, i) => out.reduce((s, p) => s + p.spilled[i]!, 0)),
    unserved: demand.map((d, c) => Math.max(0, d - servedOf[c]!)),
    pieces: out,
  };
}

/**
 * Per class, the demand `capacity` leaves unserved: `coverDemand(...).unserved` without the
 * cover's breakdown (rounding asks it thousands of times per plan).
 */
export function unservedDemand(demand: readonly number[], capacity: ClassCapacity, edges: readonly SpillEdge[]): number[] {
  const { servedOf } = maxFlow(demand, capacity, edges);
  return demand.map((d, c) => Math.max(0, d - servedOf[c]!));
}

type Piece = { classIdx: number; key: string; capacityRps: number };

/** The cover's flow: the capacity pieces, the network over them, the flow on each arc and each class's load served. */
function maxFlow(demand: readonly number[], capacity: ClassCapacity, edges: readonly SpillEdge[]): { pieces: Piece[]; net: Network; flow: Float64Array; servedOf: Float64Array } {
  // Capacity nodes: the pieces within the SLO, then one outside the SLO per class.
  const pieces = demand.flatMap((_, c): Piece[] => {
    const split = capacity.byGuests?.[c];
    if (!split) return [{ classIdx: c, key: ALL, capacityRps: capacity.inSlo[c] ?? 0 }];
    return Object.keys(split).sort().map((key) => ({ classIdx: c, key, capacityRps: split[key]! }));
  });
  const net = network(demand.length, pieces, capacity, edges);
  const flow = new Float64Array(net.arcNode.length);
  const usedOn = new Float64Array(net.caps.length);
  const servedOf = new Float64Array(demand.length);
  const push = (c: number, a: number, amount: number) => {
    flow[a]! += amount;
    usedOn[net.arcNode[a]!]! += amount;
    servedOf[c]! += amount;
  };
  // Own capacity within the SLO first; with edges, load outside it is only placed by augmenting paths, after spilling.
  for (let c = 0; c < demand.length; c++) {
    for (let a = net.arcStart[c]!; a < net.arcStart[c + 1]!; a++) {
      const e = net.arcEdge[a]!;
      if (e === -1 || (e === -2 && edges.length === 0)) push(c, a, Math.max(0, Math.min(demand[c]! - servedOf[c]!, net.caps[net.arcNode[a]!]! - usedOn[net.arcNode[a]!]!)));
    }
  }
  if (edges.length > 0) {
    const eps = EPS * Math.max(1, ...demand);
    const search = new PathSearch(net, demand, flow, usedOn, servedOf, eps);
    for (let guard = 0; guard < 4 * (net.caps.length + net.arcNode.length) ** 2; guard++) {
      const amount = search.next();
      if (amount === undefined) break;
      for (const step of search.steps) push(net.arcClass[step.arc]!, step.arc, step.sign * amount);
    }
  }
  return { pieces, net, flow, servedOf };
}

function network(classes: number, pieces: readonly Piece[], capacity: ClassCapacity, edges: readonly SpillEdge[]): Network {
  const piecesOf = Array.from({ length: classes }, () => [] as number[]);
  pieces.forEach((p, node) => piecesOf[p.classIdx]!.push(node));
  // The guests each piece admits ("" admits none); undefined: every guest.
  const admitted = pieces.map((p) => (p.key === ALL ? undefined : new Set(p.key === "" ? [] : p.key.split(",").map(Number))));
  const nodes: number[] = [];
  const kinds: number[] = [];
  const arcStart = new Int32Array(classes + 1);
  for (let c = 0; c < classes; c++) {
    arcStart[c] = nodes.length;
    const arc = (node: number, kind: number) => {
      nodes.push(node);
      kinds.push(kind);
    };
    for (const node of piecesOf[c]!) arc(node, -1);
    edges.forEach((e, i) => {
      if (e.from === c) for (const node of piecesOf[e.to]!) if (admitted[node]?.has(c) ?? true) arc(node, i);
    });
    arc(pieces.length + c, -2);
  }
  arcStart[classes] = nodes.length;
  const caps = Float64Array.from([...pieces.map((p) => p.capacityRps), ...Array.from({ length: classes }, (_, c) => capacity.outside[c] ?? 0)]);
  const inStart = new Int32Array(caps.length + 1);
  for (const node of nodes) inStart[node + 1]!++;
  for (let n = 0; n < caps.length; n++) inStart[n + 1]! += inStart[n]!;
  const inArcs = new Int32Array(nodes.length);
  const filled = inStart.slice(0, caps.length);
  nodes.forEach((node, a) => (inArcs[filled[node]!++] = a));
  const arcClass = new Int32Array(nodes.length);
  for (let c = 0; c < classes; c++) arcClass.fill(c, arcStart[c]!, arcStart[c + 1]!);
  return { caps, arcStart, arcNode: Int32Array.from(nodes), arcEdge: Int32Array.from(kinds), arcClass, inStart, inArcs };
}

/**
 * Shortest augmenting paths: breadth first from every class with demand left to a node with room,
 * a node leading back to a class that uses it, so that class can move its load elsewhere.
 */
class PathSearch {
  /** The last path: arcs to add flow on (+1) and to take it off (-1). */
  readonly steps: { arc: number; sign: 1 | -1 }[] = [];
  /** Per node, the arc that reached it (-1: not yet). */
  private readonly reachedBy: Int32Array;
  /** Per class, the arc whose load it gives up (-1: a class with demand left, where paths start; -2: not reached). */
  private readonly classFrom: Int32Array;
  private readonly queue: Int32Array;

  constructor(
    private readonly net: Network,
    private readonly demand: readonly number[],
    private readonly flow: Float64Array,
    private readonly usedOn: Float64Array,
    private readonly servedOf: Float64Array,
    private readonly eps: number,
  ) {
    this.reachedBy = new Int32Array(net.caps.length);
    this.classFrom = new Int32Array(demand.length);
    this.queue = new Int32Array(demand.length);
  }

  /** Finds the next path (`steps`) and the load it moves, or undefined when none is left. */
  next(): number | undefined {
    const { net, flow, eps, reachedBy, classFrom, queue } = this;
    reachedBy.fill(-1);
    classFrom.fill(-2);
    let head = 0;
    let tail = 0;
    for (let c = 0; c < this.demand.length; c++) {
      if (this.left(c) <= eps) continue;
      classFrom[c] = -1;
      queue[tail++] = c;
    }
    while (head < tail) {
      const c = queue[head++]!;
      for (let a = net.arcStart[c]!; a < net.arcStart[c + 1]!; a++) {
        const node = net.arcNode[a]!;
        if (reachedBy[node] !== -1) continue;
        reachedBy[node] = a;
        if (this.room(node) > eps) return this.trace(node);
        // Push back a class that uses this capacity, so it can move elsewhere.
        for (let i = net.inStart[node]!; i < net.inStart[node + 1]!; i++) {
          const back = net.inArcs[i]!;
          const bc = net.arcClass[back]!;
          if (classFrom[bc] !== -2 || flow[back]! <= eps) continue;
          classFrom[bc] = back;
          queue[tail++] = bc;
        }
      }
    }
    return undefined;
  }

  private trace(end: number): number {
    const { net, flow } = this;
    this.steps.length = 0;
    let amount = this.room(end);
    let node = end;
    for (;;) {
      const a = this.reachedBy[node]!;
      const c = net.arcClass[a]!;
      this.steps.push({ arc: a, sign: 1 });
      const from = this.classFrom[c]!;
      if (from === -1) return Math.min(amount, this.left(c));
      this.steps.push({ arc: from, sign: -1 });
      amount = Math.min(amount, flow[from]!);
      node = net.arcNode[from]!;
    }
  }

  private room(node: number): number {
    return this.net.caps[node]! - this.usedOn[node]!;
  }

  private left(c: number): number {
    return this.demand[c]! - this.servedOf[c]!;
  }
}
