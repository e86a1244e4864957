import { relative } from "node:path";
import { fileURLToPath } from "node:url";

/** The `data/` folder the repository (and the npm package) carries: the public data sets of data/README.md. */
const PACKAGE_DATA_DIR = fileURLToPath(new URL("../../data", import.meta.url));

/**
 * The default `--data` folder: the package's own `data/`, as a path relative to the working
 * directory when one exists (so reports written from the repository root say `data/...`).
 *
 * @example
 * defaultDataDir(); // "data" from the repository root, "node_modules/greenference/data" from a project that installed it
 */
export function defaultDataDir(cwd = process.cwd()): string {
  return relative(cwd, PACKAGE_DATA_DIR) || ".";
}
