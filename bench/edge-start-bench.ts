import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Miniflare } from "miniflare";
import { measureColdStarts, type ColdStarts } from "./edge/cold-start.ts";
import { buildWorker } from "./edge/worker-build.ts";
import { routingWorker, wasmImportWorker } from "./edge/workers.ts";

/** The smallest valid WebAssembly module: magic number and version. */
const EMPTY_WASM = Uint8Array.of(0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00);
const ROOT = fileURLToPath(new URL("..", import.meta.url));

interface StartView {
  ready_ms: number;
  first_response_ms: number;
  cpu_ms: number | null;
  cpu_quartiles_ms: [number, number] | null;
}

export interface EdgeStartResult {
  runs: number;
  /**
   * The edge Worker with HiGHS's module and with an empty one. Medians: time to ready (Miniflare
   * in this process included, which also pays for handing workerd the larger module), first
   * response, and workerd's CPU from its start to the first response, the cost a cold isolate
   * pays (with its quartiles).
   */
  edge: { with_highs_module: StartView; without_highs_module: StartView };
  /** The module alone: a one-line Worker importing highs.wasm, and the same importing an empty module (less noise than the edge). */
  module_only: { highs: StartView; empty: StartView };
  bundle_gzip_kib: { with_highs_module: number; without_highs_module: number };
  load_avg_1m: number;
}

/**
 * What HiGHS's WebAssembly module costs the edge Worker's cold start: the Worker as wrangler
 * bundles it, against the same bundle with that module replaced by an empty one (identical
 * JavaScript; the solver is only instantiated when a planner runs, so the edge still serves), and
 * the module alone against an empty one. Each is started `runs` times in local workerd, in turns.
 * Every process and file it starts or writes is gone when it returns or throws.
 */
export async function runEdgeStartBench(runs = 15): Promise<EdgeStartResult> {
  const dir = mkdtempSync(join(tmpdir(), "greenference-edge-start-"));
  const started: Miniflare[] = [];
  try {
    const withHighs = buildWorker(ROOT, join(dir, "with"));
    const without = join(dir, "without");
    cpSync(withHighs.dir, without, { recursive: true });
    const wasm = readdirSync(without).filter((f) => f.endsWith(".wasm"));
    if (wasm.length !== 1) throw new Error(`edge start bench: expected HiGHS's one .wasm module in the bundle, found ${wasm.length}`);
    writeFileSync(join(without, wasm[0]!), EMPTY_WASM);
    const highs = readFileSync(join(withHighs.dir, wasm[0]!));
    const track = (mf: Miniflare) => started.push(mf);
    const edge = await measureColdStarts({ with: () => routingWorker(withHighs.main, "edge-start"), without: () => routingWorker(join(without, basename(withHighs.main)), "edge-start") }, runs, track);
    const alone = await measureColdStarts({ highs: () => wasmImportWorker(highs), empty: () => wasmImportWorker(EMPTY_WASM) }, runs, track);
    const view = (m: ColdStarts): StartView => ({ ready_ms: round(m.readyMs), first_response_ms: round(m.firstResponseMs), cpu_ms: m.cpuMs === null ? null : round(m.cpuMs), cpu_quartiles_ms: m.cpuQuartilesMs && [round(m.cpuQuartilesMs[0]), round(m.cpuQuartilesMs[1])] });
    const wasmGzipKib = withHighs.moduleGzipBytes[wasm[0]!]! / 1024;
    return {
      runs,
      edge: { with_highs_module: view(edge.with!), without_highs_module: view(edge.without!) },
      module_only: { highs: view(alone.highs!), empty: view(alone.empty!) },
      bundle_gzip_kib: { with_highs_module: round(withHighs.gzipBytes / 1024), without_highs_module: round(withHighs.gzipBytes / 1024 - wasmGzipKib) },
      load_avg_1m: round(loadavg()[0]!),
    };
  } finally {
    await Promise.allSettled(started.map((mf) => mf.dispose()));
    rmSync(dir, { recursive: true, force: true });
  }
}

function round(x: number): number {
  return Math.round(x * 10) / 10;
}
