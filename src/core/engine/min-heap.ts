/** A binary min-heap of (key, value) pairs of numbers; ties pop in no particular order. */
export class MinHeap {
  private readonly keys: number[] = [];
  private readonly values: number[] = [];

  get size(): number {
    return this.keys.length;
  }

  /** Smallest key, or Infinity when empty. */
  peekKey(): number {
    return this.keys.length > 0 ? this.keys[0]! : Infinity;
  }

  push(key: number, value: number): void {
    const k = this.keys;
    const v = this.values;
    let i = k.length;
    k.push(key);
    v.push(value);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (k[parent]! <= key) break;
      k[i] = k[parent]!;
      v[i] = v[parent]!;
      i = parent;
    }
    k[i] = key;
    v[i] = value;
  }

  /** Removes the smallest entry and returns its value. */
  pop(): number {
    const k = this.keys;
    const v = this.values;
    const top = v[0]!;
    const lastKey = k.pop()!;
    const lastValue = v.pop()!;
    const n = k.length;
    if (n > 0) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= n) break;
        const r = l + 1;
        const c = r < n && k[r]! < k[l]! ? r : l;
        if (k[c]! >= lastKey) break;
        k[i] = k[c]!;
        v[i] = v[c]!;
        i = c;
      }
      k[i] = lastKey;
      v[i] = lastValue;
    }
    return top;
  }
}
