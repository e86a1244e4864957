import { expect } from "vitest";
import { ExperimentRow, holds, type ReproduceOptions, type SeedName, type SeedResult } from "../../bench/reproduce/experiment.ts";

/** Options for a `--quick` run against the shared data, messages collected. */
export function quickOptions(extra: Partial<ReproduceOptions> = {}): ReproduceOptions & { messages: string[] } {
  const messages: string[] = [];
  return { dataDir: "data", grids: [], outDir: "out/test-reproduce", seed: 1, quick: true, progress: (m) => messages.push(m), messages, ...extra };
}

/**
 * The contract every seed's result keeps: valid rows of this seed with its command, `holds` as the
 * helper says (or as a stated bound; a headline's with its guards), one headline, simulated inputs with the seed, Markdown tables and SVG plots.
 */
export function expectWellFormed(result: SeedResult, seed: SeedName, rows: number): void {
  expect(result.rows).toHaveLength(rows);
  for (const row of result.rows) {
    expect(ExperimentRow.parse(row)).toEqual(row);
    expect(row.seed).toBe(seed);
    expect(row.command).toBe(`npx greenference reproduce ${seed}`);
    expect(Number.isFinite(row.ours)).toBe(true);
    if (row.note?.includes("a bound: holds when ours is >=")) expect(row.holds).toBe(row.ours >= row.paper);
    else if (row.note?.includes("a bound: holds when ours is <=")) expect(row.holds).toBe(row.ours <= row.paper);
    // A headline holds only when its guards (the other side of the paper's trade-off) hold too.
    else expect(row.holds).toBe(holds(row.paper, row.ours, row.unit) && (row.guards ?? []).every((g) => g.holds));
    if (row.headline) expect(row.guards?.length).toBeGreaterThan(0);
  }
  expect(result.rows.filter((r) => r.headline)).toHaveLength(1);
  expect(new Set(result.rows.map((r) => r.metric)).size).toBe(rows);
  expect(result.inputs).toMatchObject({ simulated: true, seed: 1 });
  expect(result.tables.length).toBeGreaterThan(0);
  for (const t of result.tables) expect(t.markdown.split("\n")[1]).toMatch(/^\| -+/);
  expect(result.plots.length).toBeGreaterThan(0);
  for (const p of result.plots) expect(p.svg.startsWith("<svg")).toBe(true);
}

/** The row whose metric starts with `prefix`. */
export function rowOf(result: SeedResult, prefix: string): ExperimentRow {
  const row = result.rows.find((r) => r.metric.startsWith(prefix));
  if (!row) throw new Error(`no row starting with '${prefix}' in ${result.rows.map((r) => r.metric).join("; ")}`);
  return row;
}
