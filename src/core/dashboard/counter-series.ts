/** The edge counters the dashboard reads and the baseline adds to (src/worker/metrics.ts describes them). */
export const COUNTERS = {
  energyJ: "greenference_energy_joules_total",
  carbonG: "greenference_carbon_grams_total",
  baselineCarbonG: "greenference_baseline_carbon_grams_total",
  routeDecisions: "greenference_route_decisions_total",
} as const;

/** A Prometheus series key split into its metric name and labels. */
export interface SeriesLabels {
  name: string;
  labels: Record<string, string>;
}

const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/**
 * Splits a series key as the edge's counters write it (`name{a="x",b="y"}`, see `series` in
 * src/worker/metrics.ts), undoing the escapes of label values.
 *
 * @example
 * parseSeries('greenference_energy_joules_total{site="eu-a"}'); // { name: "greenference_energy_joules_total", labels: { site: "eu-a" } }
 */
export function parseSeries(key: string): SeriesLabels {
  const brace = key.indexOf("{");
  if (brace < 0) return { name: key, labels: {} };
  const labels: Record<string, string> = {};
  for (const m of key.slice(brace).matchAll(LABEL)) labels[m[1]!] = m[2]!.replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c));
  return { name: key.slice(0, brace), labels };
}

/**
 * Sums the totals of one counter by the values of one label (series without the label are left out).
 *
 * @example
 * sumBy(totals, "greenference_carbon_grams_total", "site"); // { "eu-a": 1.2, "us-c": 3.4 }
 */
export function sumBy(totals: Record<string, number>, name: string, label: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [key, value] of Object.entries(totals)) {
    if (!key.startsWith(name)) continue;
    const s = parseSeries(key);
    const v = s.labels[label];
    if (s.name === name && v !== undefined) out[v] = (out[v] ?? 0) + value;
  }
  return out;
}
