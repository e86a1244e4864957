import { spawnSync } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { basename, extname, join } from "node:path";
import { gzipSync } from "node:zlib";

/** The Worker as `wrangler deploy` would upload it. */
export interface WorkerBuild {
  dir: string;
  /** The entry module (index.js for wrangler.toml's main). */
  main: string;
  bytes: number;
  gzipBytes: number;
  /** Gzipped size of each module file, by file name. */
  moduleGzipBytes: Record<string, number>;
}

/**
 * Bundles the Worker with `wrangler deploy --dry-run --outdir <dir>` (nothing is uploaded) and
 * gzips its modules, JavaScript and WebAssembly (source maps left out: they are not part of the
 * upload's size limit). `entry` replaces wrangler.toml's main, every other setting kept.
 */
export function buildWorker(root: string, dir: string, o: { timeoutMs?: number; entry?: string } = {}): WorkerBuild {
  const wrangler = join(root, "node_modules", "wrangler", "bin", "wrangler.js");
  const run = spawnSync(process.execPath, [wrangler, "deploy", "--dry-run", "--outdir", dir, ...(o.entry ? [o.entry] : [])], { cwd: root, encoding: "utf8", timeout: o.timeoutMs ?? 120_000, env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "1" } });
  if (run.status !== 0) throw new Error(`wrangler deploy --dry-run failed (${run.signal ?? run.status}): ${(run.stderr || run.stdout).slice(-2000)}`);
  const modules = readdirSync(dir).filter((f) => f.endsWith(".js") || f.endsWith(".mjs") || f.endsWith(".wasm"));
  let bytes = 0;
  const moduleGzipBytes: Record<string, number> = {};
  for (const f of modules) {
    const content = readFileSync(join(dir, f));
    bytes += content.byteLength;
    moduleGzipBytes[f] = gzipSync(content).byteLength;
  }
  const gzipBytes = Object.values(moduleGzipBytes).reduce((a, b) => a + b, 0);
  const main = o.entry ? `${basename(o.entry, extname(o.entry))}.js` : "index.js";
  return { dir, main: join(dir, main), bytes, gzipBytes, moduleGzipBytes };
}
