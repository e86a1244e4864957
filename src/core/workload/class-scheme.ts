import type { LengthPair } from "../data/azure-trace.ts";
import { DataError } from "../data/data-error.ts";
import { ClassScheme } from "../schemas/request-class.ts";
import type { ClassId } from "../schemas/ids.ts";
import { nearestRankPercentile, sortedAscending } from "../stats/percentile.ts";

/**
 * Class schemes bin requests by input length and output length. A class id is the input bin's
 * label followed by the output bin's label: in the default 3x3 scheme "SL" is a short input with a
 * long output. A length equal to an edge falls in the lower bin (see ClassScheme).
 */

/** How schemeFromPercentiles reads percentiles; also reported by the `classes` CLI. */
export const CLASS_PERCENTILE_METHOD = "nearest-rank";

export interface PercentileSchemeOptions {
  name?: string;
  /** Percentiles (0 < p < 100, increasing) of input length that become the input edges. */
  inputPercentiles?: readonly number[];
  outputPercentiles?: readonly number[];
}

/**
 * Builds a scheme whose edges are nearest-rank percentiles of the workload's lengths: the edge for
 * p is the smallest length with at least p% of requests at or below it, so the lower bins hold at
 * least p% of the requests. Defaults to 33/66 on both axes, labels S/M/L (DynamoLLM's 9 classes).
 *
 * @example
 * const scheme = schemeFromPercentiles(trace.requests); // inputEdges [p33, p66], outputEdges [p33, p66]
 * classify(scheme, 2000, 20); // "LS"
 */
export function schemeFromPercentiles(lengths: readonly LengthPair[], options: PercentileSchemeOptions = {}): ClassScheme {
  if (lengths.length === 0) throw new DataError("cannot derive class edges from an empty workload");
  const inputPercentiles = options.inputPercentiles ?? [33, 66];
  const outputPercentiles = options.outputPercentiles ?? [33, 66];
  const inputEdges = edgesAt(lengths.map((l) => l.inputTokens), inputPercentiles, "input");
  const outputEdges = edgesAt(lengths.map((l) => l.outputTokens), outputPercentiles, "output");
  return ClassScheme.parse({
    name: options.name ?? `in-p${inputPercentiles.join("-")}/out-p${outputPercentiles.join("-")}`,
    inputEdges,
    outputEdges,
    inputLabels: defaultLabels(inputEdges.length + 1),
    outputLabels: defaultLabels(outputEdges.length + 1),
  });
}

/** Labels for n bins, shortest first: S/L, S/M/L, otherwise 1..n (at most 9 bins, one character each). */
export function defaultLabels(bins: number): string[] {
  if (bins === 2) return ["S", "L"];
  if (bins === 3) return ["S", "M", "L"];
  if (bins < 1 || bins > 9) throw new Error(`between 1 and 9 bins per axis are supported, got ${bins}`);
  return Array.from({ length: bins }, (_, i) => String(i + 1));
}

/** Index of the bin holding `tokens`: the first edge it does not exceed, or the last bin. */
export function binIndex(edges: readonly number[], tokens: number): number {
  for (let i = 0; i < edges.length; i++) if (tokens <= edges[i]!) return i;
  return edges.length;
}

/** The class of one request. */
export function classify(scheme: ClassScheme, inputTokens: number, outputTokens: number): ClassId {
  return (scheme.inputLabels[binIndex(scheme.inputEdges, inputTokens)]! + scheme.outputLabels[binIndex(scheme.outputEdges, outputTokens)]!) as ClassId;
}

/** Every class id of a scheme, input bin major: SS, SM, SL, MS, ... */
export function classIds(scheme: ClassScheme): ClassId[] {
  return scheme.inputLabels.flatMap((i) => scheme.outputLabels.map((o) => (i + o) as ClassId));
}

/** Requests per class (every class present, zero if empty). */
export function classCounts(scheme: ClassScheme, requests: readonly LengthPair[]): Record<ClassId, number> {
  const counts = Object.fromEntries(classIds(scheme).map((id) => [id, 0])) as Record<ClassId, number>;
  for (const r of requests) {
    const id = classify(scheme, r.inputTokens, r.outputTokens);
    counts[id] = (counts[id] ?? 0) + 1;
  }
  return counts;
}

/**
 * Fraction of requests per class; every class of the scheme is present and the shares sum to 1.
 *
 * @example
 * classShares(scheme, trace.requests).SS; // e.g. 0.147
 */
export function classShares(scheme: ClassScheme, requests: readonly LengthPair[]): Record<ClassId, number> {
  if (requests.length === 0) throw new DataError("class shares of an empty workload");
  const counts = classCounts(scheme, requests);
  for (const id of Object.keys(counts) as ClassId[]) counts[id] = counts[id]! / requests.length;
  return counts;
}

function edgesAt(values: number[], percentiles: readonly number[], axis: string): number[] {
  percentiles.forEach((p, i) => {
    if (!(p > 0 && p < 100)) throw new Error(`${axis} percentiles must be in (0, 100), got ${p}`);
    if (i > 0 && p <= percentiles[i - 1]!) throw new Error(`${axis} percentiles must increase, got ${percentiles.join(",")}`);
  });
  const sorted = sortedAscending(values);
  const edges = percentiles.map((p) => nearestRankPercentile(sorted, p));
  edges.forEach((edge, i) => {
    if (edge < 1) throw new DataError(`the ${percentiles[i]}th ${axis} percentile is ${edge} tokens; an edge must be at least 1`);
    if (i > 0 && edge === edges[i - 1]) {
      throw new DataError(`the ${percentiles[i - 1]}th and ${percentiles[i]}th ${axis} percentiles are both ${edge} tokens; too many ties to split there`);
    }
  });
  return edges;
}
