import { ExperimentRow } from "./experiment.ts";

/**
 * A row for Greenference's combined policy against a seed's own policy on that seed's scenario.
 * Ours is the combined policy's main metric over the seed policy's (a ratio; the paper column is
 * 1, break-even). It holds when the combined policy does better (above 1 where more is better,
 * below 1 where less is) and its SLO attainment is not lower; the note carries both attainments.
 *
 * @example
 * combinedRow({ metric: "energy vs DynamoLLM", ours: 9, theirs: 10, better: "lower", baseline: "DynamoLLM", slo: { ours: 0.99, theirs: 0.98 }, command }).holds; // true
 */
export function combinedRow(o: { metric: string; ours: number; theirs: number; better: "higher" | "lower"; baseline: string; slo: { ours: number; theirs: number }; command: string }): ExperimentRow {
  const ratio = o.ours / o.theirs;
  const beats = o.better === "higher" ? ratio > 1 : ratio < 1;
  const pct = (x: number) => `${(100 * x).toFixed(2)}%`;
  return ExperimentRow.parse({
    seed: "greenference",
    metric: o.metric,
    paper: 1,
    ours: ratio,
    baseline: o.baseline,
    holds: beats && o.slo.ours >= o.slo.theirs,
    unit: "ratio",
    command: o.command,
    id: `greenference-vs-${o.baseline.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "")}`,
    note: `combined / ${o.baseline}, ${o.better} is better; SLO attainment ${pct(o.slo.ours)} vs ${pct(o.slo.theirs)}; holds when it does better without lower attainment`,
  });
}
