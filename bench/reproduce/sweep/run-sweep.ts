import { appendFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { loadGrid, readDataFile } from "../../../host-agent/data/read-data-file.ts";
import { parseAzureTrace } from "../../../src/core/data/azure-trace.ts";
import { windSeries } from "../../../src/core/data/grid-series.ts";
import type { ExperimentRow, GridWindow, ReproduceOptions, SeedName } from "../experiment.ts";
import { SEEDS } from "../experiment.ts";
import { defaultWindFiles } from "../heron-fleet.ts";
import { REPRODUCTIONS } from "../seeds.ts";
import { gridWindows } from "./grid-windows.ts";
import { mixTraceCsv, WORKLOAD_MIXES } from "./workload-mixes.ts";
import { makeDir } from "../../../host-agent/util/make-dir.ts";

/** Seeds whose rows read the grid series (the others run once per mix and random seed, and stand for every window). */
const READS_GRID: Record<SeedName, boolean> = { heron: true, dynamollm: true, clover: true, freesh: false, greenserve: false };

/** One cell's row: where it ran and what it found. */
export interface CellRow {
  mix: string;
  window: string;
  seed: number;
  row: ExperimentRow;
}

export interface SweepOptions {
  dataDir: string;
  trace: string;
  outDir: string;
  seeds: readonly number[];
  mixes: readonly string[];
  windowHours: number;
  quick: boolean;
  progress: (message: string) => void;
}

/**
 * Runs every seed's headline and combined-policy rows in every cell of mixes x grid windows x
 * random seeds. A seed that reads no grid (FREESH, GreenServe) runs once per mix and random seed
 * and its rows stand in each window's cell.
 */
export async function runSweep(o: SweepOptions): Promise<{ windows: GridWindow[]; cells: number; rows: CellRow[] }> {
  const windFiles = await defaultWindFiles(o.dataDir);
  const windows = gridWindows(await Promise.all(windFiles.map(async (f) => windSeries((await loadGrid(f)).rows).values)), o.windowHours);
  const traceText = await readDataFile(o.trace);
  const trace = parseAzureTrace(traceText, o.trace);
  const mixDir = join(o.outDir, "mixes");
  await makeDir(mixDir);
  const out: CellRow[] = [];
  const progressFile = join(o.outDir, "cells.jsonl");
  await writeFile(progressFile, "");
  for (const mix of WORKLOAD_MIXES.filter((m) => o.mixes.includes(m.name))) {
    const tracePath = join(mixDir, `${mix.name}.csv`);
    await writeFile(tracePath, mixTraceCsv(traceText, mix.lengths(trace)));
    for (const seed of o.seeds) {
      for (const name of SEEDS) {
        const once = !READS_GRID[name];
        for (const [i, window] of windows.entries()) {
          if (once && i > 0) continue;
          const options: ReproduceOptions = { dataDir: o.dataDir, trace: tracePath, grids: [], outDir: join(o.outDir, "cells"), seed, quick: o.quick, sweep: { window }, progress: (m) => o.progress(`${mix.name} / ${once ? "any window" : window.label} / seed ${seed} / ${name}: ${m}`) };
          const result = await REPRODUCTIONS[name].run(options);
          const cells = once ? windows : [window];
          const found = result.rows.flatMap((row) => cells.map((w) => ({ mix: mix.name, window: w.label, seed, row })));
          out.push(...found);
          // Written as they come, so a sweep stopped half-way still shows its cells.
          await appendFile(progressFile, found.map((c) => JSON.stringify(c) + "\n").join(""));
        }
      }
    }
  }
  return { windows, cells: o.mixes.length * windows.length * o.seeds.length, rows: out };
}
