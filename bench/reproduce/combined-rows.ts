import { ExperimentRow } from "./experiment.ts";

/**
 * How close to the seed policy's figure a combined-policy row counts as a tie: 0.1% of it. Where
 * the seed policy already serves every request that arrives (Heron's goodput in a windy window),
 * serving more is impossible and both figures are equal.
 */
export const COMBINED_TIE_TOLERANCE = 0.001;

/**
 * A row for Greenference's combined policy against a seed's own policy on that seed's scenario.
 * Ours is the combined policy's main metric over the seed policy's (a ratio; the paper column is
 * 1, break-even). It is a tie (`tie`) when the ratio is within `COMBINED_TIE_TOLERANCE` of 1. It
 * holds when the combined policy does better (above 1 where more is better, below 1 where less
 * is) or ties, and its SLO attainment is not lower; the note carries both attainments and says
 * which of win, tie or loss it is.
 *
 * @example
 * combinedRow({ metric: "energy vs DynamoLLM", ours: 9, theirs: 10, better: "lower", baseline: "DynamoLLM", slo: { ours: 0.99, theirs: 0.98 }, command }).holds; // true
 */
export function combinedRow(o: { metric: string; ours: number; theirs: number; better: "higher" | "lower"; baseline: string; slo: { ours: number; theirs: number }; command: string }): ExperimentRow {
  const ratio = o.ours / o.theirs;
  const tie = Math.abs(ratio - 1) <= COMBINED_TIE_TOLERANCE;
  const beats = !tie && (o.better === "higher" ? ratio > 1 : ratio < 1);
  const attains = o.slo.ours >= o.slo.theirs;
  const outcome = !attains ? "a loss (lower attainment)" : beats ? "a win" : tie ? "a tie" : "a loss";
  const pct = (x: number) => `${(100 * x).toFixed(2)}%`;
  return ExperimentRow.parse({
    seed: "greenference",
    metric: o.metric,
    paper: 1,
    ours: ratio,
    baseline: o.baseline,
    holds: (beats || tie) && attains,
    unit: "ratio",
    command: o.command,
    id: `greenference-vs-${o.baseline.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "")}`,
    note: `combined / ${o.baseline}, ${o.better} is better; SLO attainment ${pct(o.slo.ours)} vs ${pct(o.slo.theirs)}; ${outcome}: it holds when it does better, or ties within ${100 * COMBINED_TIE_TOLERANCE}%, without lower attainment`,
    ...(tie ? { tie: true } : {}),
  });
}
