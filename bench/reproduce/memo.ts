/**
 * A per-process cache for what a sweep's cells share (a mix's profiles, runs no window changes):
 * `memo(key, make)` makes the value once per key. Keys name every input the value depends on.
 */
const cache = new Map<string, unknown>();

export function memo<T>(key: string, make: () => T): T {
  if (!cache.has(key)) cache.set(key, make());
  return cache.get(key) as T;
}
