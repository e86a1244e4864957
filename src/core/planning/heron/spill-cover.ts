/**
 * A class whose demand may run on the instances planned for another class (`to`) that dominates
 * it (input and output bins at least as long), one request of `from` counted as one request of
 * `to`'s capacity. Only `to`'s capacity within its SLO hosts spilled load.
 */
export interface SpillEdge {
  from: number;
  to: number;
}

/** Capacity of a plan per class, req/s of the class: at points within its SLO and at points that miss it. */
export interface ClassCapacity {
  inSlo: number[];
  outside: number[];
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
}

const EPS = 1e-9;

/**
 * The most demand `capacity` can serve (a maximum flow from classes' demand to capacity, through
 * own instances and `edges`): each class first on its own instances within the SLO, then, as
 * shortest augmenting paths find room, spilled to hosts (edges in their order) before its own
 * instances outside the SLO. Without edges every class gets min(demand, capacity). Deterministic.
 *
 * @example
 * coverDemand([1, 3], { inSlo: [0, 5], outside: [0, 0] }, [{ from: 0, to: 1 }]).unserved; // [0, 0]
 */
export function coverDemand(demand: readonly number[], capacity: ClassCapacity, edges: readonly SpillEdge[]): Cover {
  const n = demand.length;
  const ownInSlo = demand.map((d, c) => Math.min(d, capacity.inSlo[c] ?? 0));
  // With edges, load outside the SLO is only placed by augmenting paths, after spilling.
  const ownOutside = demand.map((d, c) => (edges.length > 0 ? 0 : Math.min(d - ownInSlo[c]!, capacity.outside[c] ?? 0)));
  const spilled = edges.map(() => 0);
  const left = (c: number) => demand[c]! - ownInSlo[c]! - ownOutside[c]! - edges.reduce((s, e, i) => s + (e.from === c ? spilled[i]! : 0), 0);
  if (edges.length > 0) {
    // Arcs from a class's demand: own in-SLO capacity (node c), spill hosts' in-SLO capacity, own
    // capacity outside the SLO (node n + c). Augment along shortest paths (Edmonds-Karp).
    const arcs = Array.from({ length: n }, (_, c) => [{ node: c, edge: -1 }, ...edges.flatMap((e, i) => (e.from === c ? [{ node: e.to, edge: i }] : [])), { node: n + c, edge: -2 }]);
    const flowOn = (c: number, arc: { node: number; edge: number }) => (arc.edge === -1 ? ownInSlo[c]! : arc.edge === -2 ? ownOutside[c]! : spilled[arc.edge]!);
    const room = (node: number) => (node < n ? capacity.inSlo[node]! - ownInSlo[node]! - edges.reduce((s, e, i) => s + (e.to === node ? spilled[i]! : 0), 0) : capacity.outside[node - n]! - ownOutside[node - n]!);
    const scale = Math.max(1, ...demand);
    for (let guard = 0; guard < 4 * (n + edges.length) ** 2; guard++) {
      const path = augmentingPath(n, arcs, flowOn, room, left, EPS * scale);
      if (!path) break;
      for (const step of path.steps) {
        const delta = step.sign * path.amount;
        if (step.arc.edge === -1) ownInSlo[step.c]! += delta;
        else if (step.arc.edge === -2) ownOutside[step.c]! += delta;
        else spilled[step.arc.edge]! += delta;
      }
    }
  }
  return { ownInSlo, ownOutside, spilled, unserved: demand.map((_, c) => Math.max(0, left(c))) };
}

type Arc = { node: number; edge: number };

/** A shortest path from a class with demand left to capacity with room, alternating forward and backward arcs. */
function augmentingPath(
  n: number,
  arcs: readonly Arc[][],
  flowOn: (c: number, arc: Arc) => number,
  room: (node: number) => number,
  left: (c: number) => number,
  eps: number,
): { steps: { c: number; arc: Arc; sign: 1 | -1 }[]; amount: number } | undefined {
  // Capacity nodes 0..2n-1; a node is reached from the class whose forward arc leads to it.
  const reachedBy = new Map<number, { c: number; arc: Arc }>();
  const classFrom = new Map<number, { node: number; arc: Arc } | null>();
  const queue: number[] = [];
  for (let c = 0; c < n; c++) {
    if (left(c) <= eps) continue;
    classFrom.set(c, null);
    queue.push(c);
  }
  while (queue.length > 0) {
    const c = queue.shift()!;
    for (const arc of arcs[c]!) {
      if (reachedBy.has(arc.node)) continue;
      reachedBy.set(arc.node, { c, arc });
      if (room(arc.node) > eps) return trace(arc.node, reachedBy, classFrom, flowOn, room, left);
      // Push back a class that uses this capacity, so it can move elsewhere.
      for (let d = 0; d < n; d++) {
        if (classFrom.has(d)) continue;
        const back = arcs[d]!.find((a) => a.node === arc.node);
        if (!back || flowOn(d, back) <= eps) continue;
        classFrom.set(d, { node: arc.node, arc: back });
        queue.push(d);
      }
    }
  }
  return undefined;
}

function trace(
  end: number,
  reachedBy: ReadonlyMap<number, { c: number; arc: Arc }>,
  classFrom: ReadonlyMap<number, { node: number; arc: Arc } | null>,
  flowOn: (c: number, arc: Arc) => number,
  room: (node: number) => number,
  left: (c: number) => number,
): { steps: { c: number; arc: Arc; sign: 1 | -1 }[]; amount: number } {
  const steps: { c: number; arc: Arc; sign: 1 | -1 }[] = [];
  let amount = room(end);
  let node = end;
  for (;;) {
    const into = reachedBy.get(node)!;
    steps.push({ c: into.c, arc: into.arc, sign: 1 });
    const from = classFrom.get(into.c);
    if (!from) {
      amount = Math.min(amount, left(into.c));
      break;
    }
    steps.push({ c: into.c, arc: from.arc, sign: -1 });
    amount = Math.min(amount, flowOn(into.c, from.arc));
    node = from.node;
  }
  return { steps, amount };
}
