/** A replica as the gateway sees it when placing a request. */
export interface ReplicaSlot {
  /** `<instance>#<replica>`. */
  key: string;
  /** Requests it may still take before it is at its concurrency limit. */
  free: number;
}

/**
 * Round-robin over the replicas of each group (an instance, or a pool of instances): each pick
 * starts after the replica picked last time in that group and takes the first one with a free
 * slot, so replicas take turns and a full one is skipped rather than waited on. Turns follow
 * keys, not positions, so a replica that leaves does not shift the others' turns. At most
 * `maxGroups` groups are remembered (the least recently used is forgotten and starts again at its
 * first replica), so groups named after request fields cannot grow it without bound.
 *
 * @example
 * const turns = new ReplicaTurns();
 * turns.pick("llama", [{ key: "llama#0", free: 2 }, { key: "llama#1", free: 2 }]); // "llama#0"
 * turns.pick("llama", [{ key: "llama#0", free: 1 }, { key: "llama#1", free: 2 }]); // "llama#1"
 */
export class ReplicaTurns {
  private readonly last = new Map<string, string>();

  constructor(private readonly maxGroups = 4096) {}

  get groups(): number {
    return this.last.size;
  }

  pick(group: string, replicas: readonly ReplicaSlot[]): string | undefined {
    const n = replicas.length;
    if (n === 0) return undefined;
    const lastKey = this.last.get(group);
    const after = lastKey === undefined ? -1 : replicas.findIndex((r) => r.key === lastKey);
    const start = after >= 0 ? after + 1 : lastKey === undefined ? 0 : firstAfter(replicas, lastKey);
    for (let i = 0; i < n; i++) {
      const r = replicas[(start + i) % n]!;
      if (r.free > 0) {
        this.remember(group, r.key);
        return r.key;
      }
    }
    return undefined;
  }

  /** Records the group's turn as its most recent use, forgetting the least recently used group past `maxGroups`. */
  private remember(group: string, key: string): void {
    this.last.delete(group);
    this.last.set(group, key);
    if (this.last.size > this.maxGroups) this.last.delete(this.last.keys().next().value!);
  }
}

/** Index of the first key that sorts after `key` (the turn of a replica that has left), 0 if none. */
function firstAfter(replicas: readonly ReplicaSlot[], key: string): number {
  const i = replicas.findIndex((r) => r.key.localeCompare(key, "en", { numeric: true }) > 0);
  return Math.max(0, i);
}
