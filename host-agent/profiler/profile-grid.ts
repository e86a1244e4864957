import { gpuSpec } from "../../src/core/model/gpu-specs.ts";
import { llmSpec } from "../../src/core/model/llm-specs.ts";
import { estimatedCapacityRps } from "../../src/core/profiling/capacity.ts";
import { meanLengths, type ClassLengths } from "../../src/core/profiling/class-lengths.ts";
import type { GpuType } from "../../src/core/schemas/ids.ts";

/** What decides the points of a profile: a table made for another grid cannot be resumed. */
export interface ProfileGrid {
  model: string;
  perfModel?: string;
  gpu: GpuType;
  tps: number[];
  clocksMhz: number[];
  classes: ClassLengths[];
  /** Load levels as fractions of the performance model's max-clock capacity estimate... */
  loadFractions?: number[];
  /** ...or as absolute request rates (a model the performance model does not know). */
  ratesRps?: number[];
  requestsPerPoint: number;
  seed: number;
  maxContext: number;
}

/** One operating point to measure. */
export interface ProfilePoint {
  key: string;
  tp: number;
  mhz: number;
  cls: ClassLengths;
  loadRps: number;
  /** Index of the point in the grid (its random stream). */
  index: number;
}

/**
 * The grid's points in the order they are measured: per TP (one engine start each), per clock (one
 * lock each), per class, per load. Load levels are the same absolute rates at every clock of a
 * (TP, class), as the virtual profiler places them, so planners can trade clock against load.
 *
 * @example
 * profilePoints({ ...grid, tps: [1], clocksMhz: [1410, 1980], classes: [ss], ratesRps: [1, 2] }).length; // 4
 */
export function profilePoints(grid: ProfileGrid): ProfilePoint[] {
  const points: ProfilePoint[] = [];
  for (const tp of grid.tps)
    for (const mhz of grid.clocksMhz)
      for (const cls of grid.classes)
        for (const loadRps of loadLevels(grid, tp, cls)) points.push({ key: pointKey(tp, mhz, cls.classId, loadRps), tp, mhz, cls, loadRps, index: points.length });
  return points;
}

/** The key of a point, as a table row also gives it (a resumed run skips the points its file has). */
export const pointKey = (tp: number, mhz: number, classId: string, loadRps: number) => `${tp}|${mhz}|${classId}|${loadRps}`;

function loadLevels(grid: ProfileGrid, tp: number, cls: ClassLengths): number[] {
  if (grid.ratesRps) return grid.ratesRps;
  if (!grid.perfModel || !grid.loadFractions) throw new Error("load levels need --rates, or --loads with a model the performance model knows");
  const mean = meanLengths(cls);
  const gpu = gpuSpec(grid.gpu);
  const capacity = estimatedCapacityRps({ llm: llmSpec(grid.perfModel), gpu, tp, mhz: gpu.maxMhz }, mean.inputTokens, mean.outputTokens);
  return grid.loadFractions.map((f) => round4(capacity * f));
}

const round4 = (x: number) => Math.round(x * 1e4) / 1e4;

/**
 * `count` clocks the GPU supports, spread from `lowMhz` (or its lowest) to its highest: the
 * supported clock nearest each evenly spaced target.
 *
 * @example
 * pickClocks([1980, 1965, ..., 345], 4, 800); // [1980, 1590, 1200, 795], highest first
 */
export function pickClocks(supported: readonly number[], count: number, lowMhz = 800): number[] {
  if (supported.length === 0) throw new Error("the GPU reports no supported clocks");
  const top = Math.max(...supported);
  const bottom = Math.max(Math.min(...supported), Math.min(lowMhz, top));
  const targets = count === 1 ? [top] : Array.from({ length: count }, (_, i) => top - ((top - bottom) * i) / (count - 1));
  const nearest = (t: number) => supported.reduce((best, c) => (Math.abs(c - t) < Math.abs(best - t) ? c : best));
  return [...new Set(targets.map(nearest))].sort((a, b) => b - a);
}
