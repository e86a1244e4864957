import type { FreeshConfigPoint, FreeshPoolInput } from "./pool-input.ts";

/** Index i = (n, s, r, m) of FREESH's Eq. (1), as positions in the input's arrays. */
export interface PoolIndex {
  site: number;
  partition: number;
  type: number;
  mode: number;
}

/** A configuration that may be used, with the index it is used at. */
export interface UsableConfig extends PoolIndex {
  point: FreeshConfigPoint;
}

/**
 * Constraint (1e) read as a filter: x_i may be positive only where configuration (s, r, m) meets
 * type r's latency tolerance, so configurations over it (or that cannot serve the type at all,
 * max QPS 0, or break the TBT/TTFT SLOs) are dropped before the model is built.
 */
export function meetsTolerance(input: FreeshPoolInput, partition: number, type: number, point: FreeshConfigPoint): boolean {
  const tolerance = input.partitions[partition]?.latencyToleranceS[type] ?? 0;
  return point.maxQps > 0 && point.latencyS <= tolerance && point.tbtMs <= (input.slo.tbtMs[type] ?? 0) && point.ttftMs <= (input.slo.ttftMs[type] ?? 0);
}

/** True where a site has every GPU a mode needs (G_{m,c} <= Ḡ_{n,c} for all c): a worker can stand there at all. */
export function modeFitsSite(input: FreeshPoolInput, site: number, mode: number): boolean {
  const need = input.modes[mode]?.gpus ?? {};
  const have = input.sites[site]?.gpus ?? {};
  return Object.entries(need).every(([kind, count]) => count <= (have[kind] ?? 0));
}

/**
 * Every index i of I = N x S x R x M whose configuration passes (1e) at a site that could host
 * one worker of its mode: the integer variables of the model, in a fixed order.
 */
export function usableConfigs(input: FreeshPoolInput): UsableConfig[] {
  const out: UsableConfig[] = [];
  input.sites.forEach((_, site) =>
    input.partitions.forEach((s, partition) =>
      s.configs.forEach((row, type) =>
        row.forEach((point, mode) => {
          if (meetsTolerance(input, partition, type, point) && modeFitsSite(input, site, mode)) out.push({ site, partition, type, mode, point });
        }),
      ),
    ),
  );
  return out;
}
