import { spawnSync } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";

/** The Worker as `wrangler deploy` would upload it. */
export interface WorkerBuild {
  dir: string;
  /** The entry module (index.js). */
  main: string;
  bytes: number;
  gzipBytes: number;
}

/**
 * Bundles the Worker with `wrangler deploy --dry-run --outdir <dir>` (nothing is uploaded) and
 * gzips its JavaScript (source maps left out: they are not part of the upload's size limit).
 */
export function buildWorker(root: string, dir: string, timeoutMs = 120_000): WorkerBuild {
  const wrangler = join(root, "node_modules", "wrangler", "bin", "wrangler.js");
  const run = spawnSync(process.execPath, [wrangler, "deploy", "--dry-run", "--outdir", dir], { cwd: root, encoding: "utf8", timeout: timeoutMs, env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "1" } });
  if (run.status !== 0) throw new Error(`wrangler deploy --dry-run failed (${run.signal ?? run.status}): ${(run.stderr || run.stdout).slice(-2000)}`);
  const modules = readdirSync(dir).filter((f) => f.endsWith(".js") || f.endsWith(".mjs") || f.endsWith(".wasm"));
  let bytes = 0;
  let gzipBytes = 0;
  for (const f of modules) {
    const content = readFileSync(join(dir, f));
    bytes += content.byteLength;
    gzipBytes += gzipSync(content).byteLength;
  }
  return { dir, main: join(dir, "index.js"), bytes, gzipBytes };
}
