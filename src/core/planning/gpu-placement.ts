import type { GpuType } from "../schemas/ids.ts";
import type { GpuRange } from "./site-gpus.ts";

/** A plan entry to place: `replicas` instances of `tp` GPUs of one type, under a stable id. */
export interface EntrySlot {
  id: string;
  type: GpuType;
  tp: number;
  replicas: number;
}

/** An entry of the plan in force, as placement sees it. */
export interface PlacedEntry {
  id: string;
  type: GpuType;
  tp: number;
  gpus: number[];
}

/**
 * Gives each wanted entry tp x replicas GPU indices, keeping what runs where it can: replicas of
 * an entry of the plan in force with the same id, GPU type and TP keep their GPUs (up to the new
 * count), so only real changes restart engines. Other replicas take the lowest free blocks of
 * `tp` GPUs aligned to `tp` (a TP8 instance fills one 8-GPU server). When kept replicas fragment
 * the GPUs so that a block cannot be found, everything is packed afresh, largest TP first, which
 * always fits when the GPU counts do. Returns undefined only when they do not; the result is in
 * the order of `wanted`.
 *
 * @example
 * placeEntries([{ type: "H100-80GB", start: 0, count: 16 }], [{ id: "MM-tp8", type: "H100-80GB", tp: 8, replicas: 2 }], []);
 * // [[0, 1, ..., 15]]
 */
export function placeEntries(ranges: readonly GpuRange[], wanted: readonly EntrySlot[], previous: readonly PlacedEntry[]): number[][] | undefined {
  return placeKeeping(ranges, wanted, previous) ?? placeFresh(ranges, wanted);
}

function placeKeeping(ranges: readonly GpuRange[], wanted: readonly EntrySlot[], previous: readonly PlacedEntry[]): number[][] | undefined {
  // A bitmap rather than a Set: Heron-sized sites hold tens of thousands of GPUs.
  const taken = new Uint8Array(ranges.reduce((m, r) => Math.max(m, r.start + r.count), 0));
  const used = { has: (g: number) => taken[g] === 1, add: (g: number) => void (taken[g] = 1) };
  const byId = new Map(previous.map((p) => [`${p.id}|${p.type}|${p.tp}`, p]));
  const out = wanted.map(() => [] as number[]);
  wanted.forEach((w, i) => {
    const old = byId.get(`${w.id}|${w.type}|${w.tp}`);
    const range = ranges.find((r) => r.type === w.type);
    if (!old || !range) return;
    for (let b = 0; b + w.tp <= old.gpus.length && out[i]!.length < w.tp * w.replicas; b += w.tp) {
      const block = old.gpus.slice(b, b + w.tp);
      if (block.every((g) => g >= range.start && g < range.start + range.count && !used.has(g))) {
        block.forEach((g) => used.add(g));
        out[i]!.push(...block);
      }
    }
  });
  const cursor = new Map<string, number>();
  const order = wanted.map((_, i) => i).sort((a, b) => wanted[b]!.tp - wanted[a]!.tp || a - b);
  for (const i of order) {
    const w = wanted[i]!;
    const range = ranges.find((r) => r.type === w.type);
    if (!range) return undefined;
    // Blocks only get used as we go, so the lowest free block of a (type, TP) never moves back.
    let offset = cursor.get(`${w.type}|${w.tp}`) ?? 0;
    while (out[i]!.length < w.tp * w.replicas) {
      if (offset + w.tp > range.count) return undefined;
      const start = range.start + offset;
      const block = Array.from({ length: w.tp }, (_, k) => start + k);
      if (block.every((g) => !used.has(g))) {
        block.forEach((g) => used.add(g));
        out[i]!.push(...block);
      }
      offset += w.tp;
    }
    cursor.set(`${w.type}|${w.tp}`, offset);
  }
  return out;
}

function placeFresh(ranges: readonly GpuRange[], wanted: readonly EntrySlot[]): number[][] | undefined {
  const next = new Map(ranges.map((r) => [r.type, r.start]));
  const out = wanted.map(() => [] as number[]);
  const order = wanted.map((_, i) => i).sort((a, b) => wanted[b]!.tp - wanted[a]!.tp || a - b);
  for (const i of order) {
    const w = wanted[i]!;
    const range = ranges.find((r) => r.type === w.type);
    const start = next.get(w.type);
    const n = w.tp * w.replicas;
    if (!range || start === undefined || start + n > range.start + range.count) return undefined;
    next.set(w.type, start + n);
    out[i] = Array.from({ length: n }, (_, k) => start + k);
  }
  return out;
}
