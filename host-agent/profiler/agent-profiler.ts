import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { isDeepStrictEqual } from "node:util";
import { z } from "zod";
import { ProfileTable, type ProfileRow } from "../../src/core/schemas/profile.ts";
import { measurePoint } from "./measure-point.ts";
import type { ProfilerEngines } from "./profile-engines.ts";
import { pointKey, profilePoints, type ProfileGrid, type ProfilePoint } from "./profile-grid.ts";

export interface ProfileRunOptions {
  grid: ProfileGrid;
  engines: ProfilerEngines;
  /** The table file: written after every point, continued when it holds a partial run of the same grid. */
  out: string;
  /** After each point measured (or found in the file at the start, with `resumed`). */
  onPoint?: (done: number, total: number, point: ProfilePoint, row: ProfileRow, resumed: boolean) => void;
  nowMs?: () => number;
}

export interface ProfileRunResult {
  table: ProfileTable;
  total: number;
  /** Points measured by this run (the others came from the file). */
  measured: number;
  resumed: number;
}

/** A partial table from another grid, or a file that is not a profile table, is not continued: the error says what to do. */
export class ProfileFileError extends Error {
  override readonly name = "ProfileFileError";
}

/**
 * Profiles the site's own engines over the grid (TP x clocks x classes x load levels), as
 * `measurePoint` measures each point, and writes the profile table the planners read
 * (`source.kind: "measured"`). The file is rewritten after every point (atomically), with
 * `details.complete: false` until the last, so an interrupted run continues where it stopped when
 * run again with the same grid and file. Engines are started once per TP; clocks are reset at the end.
 *
 * @example
 * const { table } = await runProfile({ grid, engines: await openProfilerEngines(o), out: "profile.json" });
 */
export async function runProfile(o: ProfileRunOptions): Promise<ProfileRunResult> {
  const points = profilePoints(o.grid);
  const rows = new Map<string, ProfileRow>(resumable(o.out, o.grid).map((r) => [pointKey(r.tp, r.mhz, r.classId, r.loadRps), r]));
  const wanted = new Set(points.map((p) => p.key));
  for (const key of rows.keys()) if (!wanted.has(key)) rows.delete(key);
  const resumed = rows.size;
  let done = 0;
  for (const p of points) {
    const row = rows.get(p.key);
    if (row) o.onPoint?.(++done, points.length, p, row, true);
  }
  const started = (o.nowMs ?? Date.now)();
  let table: ProfileTable | undefined;
  try {
    let openTp: number | undefined;
    let target: Awaited<ReturnType<ProfilerEngines["open"]>> | undefined;
    for (const p of points) {
      if (rows.has(p.key)) continue;
      if (openTp !== p.tp) {
        target = await o.engines.open(p.tp);
        openTp = p.tp;
      }
      const row = await measurePoint(o.grid, p, target!);
      rows.set(p.key, row);
      table = tableOf(o, points, rows, started);
      write(o.out, table);
      o.onPoint?.(++done, points.length, p, row, false);
    }
  } finally {
    await o.engines.close();
  }
  table ??= tableOf(o, points, rows, started);
  if (table.rows.length > 0) write(o.out, table);
  return { table, total: points.length, measured: points.length - resumed, resumed };
}

function tableOf(o: ProfileRunOptions, points: readonly ProfilePoint[], rows: ReadonlyMap<string, ProfileRow>, startedMs: number): ProfileTable {
  const ordered = points.flatMap((p) => rows.get(p.key) ?? []);
  return {
    version: 1,
    source: { kind: "measured", details: { grid: o.grid, complete: ordered.length === points.length, points: points.length, host: hostname(), gpu: o.engines.gpuType, ...o.engines.details }, createdAtMs: startedMs },
    rows: ordered,
  };
}

/** The rows of a partial table at `path` made for the same grid; none when there is no file. */
function resumable(path: string, grid: ProfileGrid): ProfileRow[] {
  if (!existsSync(path)) return [];
  let parsed: ProfileTable;
  try {
    parsed = ProfileTable.parse(JSON.parse(readFileSync(path, "utf8")));
  } catch (error) {
    const why = error instanceof z.ZodError ? z.prettifyError(error) : (error as Error).message;
    throw new ProfileFileError(`${path} is not a profile table (${why}); remove it or write elsewhere (--out)`);
  }
  const made = parsed.source.details.grid;
  if (parsed.source.kind !== "measured" || !isDeepStrictEqual(JSON.parse(JSON.stringify(grid)), made)) {
    throw new ProfileFileError(`${path} holds a profile of another grid (model, TP, clocks, classes, loads, requests or seed differ); remove it or write elsewhere (--out) to start over`);
  }
  return parsed.rows;
}

function write(path: string, table: ProfileTable): void {
  const tmp = `${path}.partial`;
  writeFileSync(tmp, `${JSON.stringify(table, null, 1)}\n`);
  renameSync(tmp, path);
}
