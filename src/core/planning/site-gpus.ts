import type { GpuType } from "../schemas/ids.ts";

/** A site's GPUs of one type occupy indices [start, start + count). */
export interface GpuRange {
  type: GpuType;
  start: number;
  count: number;
}

/**
 * GPU index ranges of a site: types in the order the site lists them, numbered from 0. Plans name
 * GPUs by these indices.
 *
 * @example
 * gpuRanges([{ type: "H100-80GB", count: 16 }, { type: "A100-80GB", count: 8 }]); // H100 0..15, A100 16..23
 */
export function gpuRanges(gpus: readonly { type: GpuType; count: number }[]): GpuRange[] {
  let start = 0;
  return gpus.map((g) => {
    const range = { type: g.type, start, count: g.count };
    start += g.count;
    return range;
  });
}

/** The GPU type at a site's index, or undefined past the last GPU. */
export function gpuTypeAt(ranges: readonly GpuRange[], index: number): GpuType | undefined {
  return ranges.find((r) => index >= r.start && index < r.start + r.count)?.type;
}
