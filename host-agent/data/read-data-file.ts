import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { parseAzureTrace, type RequestTrace } from "../../src/core/data/azure-trace.ts";
import { DataError } from "../../src/core/data/data-error.ts";
import { parseFreeshProfiles, type FreeshProfiles } from "../../src/core/data/freesh-profiles.ts";
import { parseFreeshDemand, parseFreeshEmissions, type FreeshDemand, type FreeshEmissions } from "../../src/core/data/freesh-series.ts";
import { parseGridCsv, type GridSeries } from "../../src/core/data/grid.ts";

const REASONS: Record<string, string> = {
  ENOENT: "no such file",
  EISDIR: "is a directory",
  EACCES: "permission denied",
  ENOTDIR: "a parent is not a directory",
};

/**
 * Reads a UTF-8 data file; any failure becomes a DataError naming the path.
 *
 * @example
 * await readDataFile("missing.csv"); // throws DataError "cannot read missing.csv: no such file"
 */
export async function readDataFile(path: string): Promise<string> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    throw unreadable(path, error);
  }
}

/**
 * The paths of the files in a data folder whose names end in `suffix`, sorted; a missing folder
 * becomes a DataError naming it.
 *
 * @example
 * await dataFilesIn("data/grid-2022", ".csv"); // [".../AZPS-2022H1.csv", ...]
 */
export async function dataFilesIn(dir: string, suffix: string): Promise<string[]> {
  try {
    return (await readdir(dir)).filter((f) => f.endsWith(suffix)).sort().map((f) => join(dir, f));
  } catch (error) {
    throw unreadable(dir, error);
  }
}

function unreadable(path: string, error: unknown): DataError {
  const code = (error as NodeJS.ErrnoException).code ?? "";
  return new DataError(`cannot read ${path}: ${REASONS[code] ?? (error as Error).message}`);
}

/** Reads and parses an Azure LLM inference trace CSV. */
export async function loadAzureTrace(path: string): Promise<RequestTrace> {
  return parseAzureTrace(await readDataFile(path), path);
}

/** Reads and parses an hourly grid CSV (`<BA>-2022H1.csv`). */
export async function loadGrid(path: string): Promise<GridSeries> {
  return parseGridCsv(await readDataFile(path), path);
}

/** FREESH's inputs: profiles, marginal emissions and the demand series of both partitions. */
export interface FreeshData {
  profiles: FreeshProfiles;
  emissions: FreeshEmissions;
  demand: { a: FreeshDemand; b: FreeshDemand };
}

/**
 * Reads the FREESH folder: profiles.json, e_instance.csv and the demand files that profiles.json
 * names for partitions a and b.
 *
 * @example
 * const freesh = await loadFreesh("data/freesh");
 */
export async function loadFreesh(dir: string): Promise<FreeshData> {
  const profilesPath = join(dir, "profiles.json");
  const profiles = parseFreeshProfiles(await readDataFile(profilesPath), profilesPath);
  const csv = async <T>(name: string, parse: (text: string, source: string) => T) => {
    const path = join(dir, name);
    return parse(await readDataFile(path), path);
  };
  const [emissions, a, b] = await Promise.all([
    csv("e_instance.csv", parseFreeshEmissions),
    csv(profiles.partitions.a.demand_file, parseFreeshDemand),
    csv(profiles.partitions.b.demand_file, parseFreeshDemand),
  ]);
  return { profiles, emissions, demand: { a, b } };
}
