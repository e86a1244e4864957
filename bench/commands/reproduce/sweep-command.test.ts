import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ExperimentRow, holds } from "../../reproduce/experiment.ts";
import { combinedRow } from "../../reproduce/combined-rows.ts";
import { experimentRow, guard, headlineRow } from "../../reproduce/rows.ts";
import type { CellRow } from "../../reproduce/sweep/run-sweep.ts";
import { sweepRows, withoutConditions } from "../../reproduce/sweep/sweep-summary.ts";
import { runCli } from "../../../cli/run-command.test-helper.ts";

describe("headlines judged on both sides of their trade-off", () => {
  const energy = experimentRow({ seed: "dynamollm", metric: "energy vs SinglePool", paper: -0.35, ours: -0.6, baseline: "SinglePool", unit: "fraction", command: "c" });

  it("a headline whose figure holds but whose guard fails does not hold", () => {
    expect(energy.holds).toBe(true);
    const tail = guard({ metric: "P99 TTFT vs SinglePool", ours: 0.69, limit: 0, side: "at-most", unit: "fraction" });
    expect(tail.holds).toBe(false);
    expect(headlineRow(energy, "e", [tail]).holds).toBe(false);
    expect(headlineRow(energy, "e", [guard({ ...tail, ours: -0.05 })]).holds).toBe(true);
    expect(guard({ metric: "accuracy", ours: -0.041, limit: -0.04, side: "at-least", unit: "fraction" }).holds).toBe(false);
  });

  it("the sweep's share counts a cell only when the row and its guards hold", () => {
    const cell = (ours: number, tail: number): CellRow => ({ mix: "m", window: "w", seed: 1, row: headlineRow({ ...energy, ours, holds: holds(-0.35, ours, "fraction") }, "e", [guard({ metric: "tail", ours: tail, limit: 0, side: "at-most", unit: "fraction" })]) });
    const [row] = sweepRows([cell(-0.6, 0.1), cell(-0.5, -0.1), cell(-0.1, -0.1), cell(-0.4, -0.2)]);
    expect(row).toMatchObject({ id: "e", cells: 4, holds_share: 0.5, guards_share: 0.75, min: -0.6, median: -0.45, max: -0.1 });
  });

  it("a combined row is a win, a tie within 0.1% or a loss, and a lower attainment makes any of them a loss; the sweep counts ties apart", () => {
    const row = (ours: number, slo = { ours: 0.99, theirs: 0.98 }) => combinedRow({ metric: "goodput", ours, theirs: 1000, better: "higher", baseline: "Planner-L (min-power)", slo, command: "c" });
    expect(row(1010)).toMatchObject({ holds: true, ours: 1.01 });
    expect(row(1010).tie).toBeUndefined();
    expect(row(1000)).toMatchObject({ holds: true, tie: true });
    expect(row(999.5)).toMatchObject({ holds: true, tie: true });
    expect(row(998)).toMatchObject({ holds: false });
    expect(row(1000, { ours: 0.97, theirs: 0.98 })).toMatchObject({ holds: false, tie: true });
    expect(row(1000).note).toContain("a tie");
    const cells = [row(1010), row(1000), row(998), row(1000, { ours: 0.97, theirs: 0.98 })].map((r): CellRow => ({ mix: "m", window: "w", seed: 1, row: r }));
    expect(sweepRows(cells)[0]).toMatchObject({ holds_share: 0.5, ties_share: 0.25 });
  });

  it("a row's metric without the cell's conditions", () => {
    expect(withoutConditions("goodput ratio: Planner-L (min-power) / WRR (48 h of wind (windy), load 0.5)")).toBe("goodput ratio: Planner-L (min-power) / WRR");
    expect(withoutConditions("energy")).toBe("energy");
  });
});

describe("greenference reproduce sweep --quick", () => {
  it("prints {cells, rows} with every headline and combined row, keeps the rest of --results and writes its section", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gf-sweep-"));
    const results = join(dir, "RESULTS.md");
    writeFileSync(results, "# Reproduction results\n\nkept\n");
    const r = await runCli(["reproduce", "sweep", "--quick", "--seeds", "1", "--mixes", "coding-like", "--out", join(dir, "out"), "--results", results, "--json"]);
    expect(r.code).toBe(0);
    expect(r.out).toHaveLength(1);
    const j = r.last();
    expect(j).toMatchObject({ simulated: true, cells: 4, mixes: ["coding-like"], seeds: [1] });
    expect(j.windows.map((w: { label: string }) => w.label)).toEqual(["windy", "calm", "mixed", "regions apart"]);
    const ids = j.rows.map((row: { id: string }) => row.id).sort();
    expect(ids).toEqual(
      [
        "clover-carbon-vs-base",
        "dynamollm-energy-vs-singlepool-hour",
        "freesh-emissions-vs-baseline",
        "greenference-vs-clover",
        "greenference-vs-dynamollm",
        "greenference-vs-freesh",
        "greenference-vs-greenserve",
        "greenference-vs-planner-l-min-power",
        "greenserve-energy-vs-1410",
        "heron-goodput-vs-greedy-min-latency",
        "heron-goodput-vs-wrr-dynamollm",
      ].sort(),
    );
    for (const row of j.rows) {
      expect(row.cells).toBe(4);
      expect(row.min).toBeLessThanOrEqual(row.median);
      expect(row.median).toBeLessThanOrEqual(row.max);
      expect(row.holds_share).toBeGreaterThanOrEqual(0);
      expect(row.holds_share).toBeLessThanOrEqual(row.guards_share ?? 1);
    }
    // Every cell's headline holds exactly when its figure and all its guards hold.
    const cells: Array<{ row: ExperimentRow }> = JSON.parse(readFileSync(join(dir, "out", "sweep", "cells.json"), "utf8"));
    const headlines = cells.map((c) => ExperimentRow.parse(c.row)).filter((row) => row.headline);
    expect(headlines.length).toBe(6 * 4);
    for (const row of headlines) {
      expect(row.holds).toBe(holds(row.paper, row.ours, row.unit) && row.guards!.every((g) => g.holds));
    }
    const md = readFileSync(results, "utf8");
    expect(md).toContain("kept");
    expect(md).toMatch(/<!-- sweep:start -->\n## Robustness sweep[\s\S]*\| seed +\| row +\| paper +\| min +\| median +\| max +\| guards hold +\| row holds +\|[\s\S]*<!-- sweep:end -->/);
  }, 300_000);
});
