import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DYNAMOLLM_CLASS_LENGTHS } from "../../src/core/profiling/class-lengths.ts";
import { runProfile } from "../../host-agent/profiler/agent-profiler.ts";
import { openProfilerEngines } from "../../host-agent/profiler/profile-engines.ts";
import type { ProfileGrid } from "../../host-agent/profiler/profile-grid.ts";

export interface ProfileRowsBench {
  /** Profile rows the agent profiler measures per wall minute on this grid. */
  rows_per_minute: number;
  rows: number;
  stable_rows: number;
  seconds: number;
  inputs: { grid: ProfileGrid; sim_speed: number; simulated: true };
}

/**
 * The agent profiler (`greenference agent profile`) against the simulated engine on simulated GPUs:
 * llama3.1-8b on one A100, 2 clocks x 2 classes (MM, LL) x 2 load levels, `requests` streamed
 * requests per point, the simulated site `simSpeed` times faster than real time. The figure is
 * rows per wall minute: on real GPUs (speed 1) a point takes its requests' real time.
 *
 * @example
 * (await runProfileRowsBench({ requests: 12, simSpeed: 4 })).rows_per_minute; // ~20
 */
export async function runProfileRowsBench(o = { requests: 12, simSpeed: 4 }): Promise<ProfileRowsBench> {
  const dir = mkdtempSync(join(tmpdir(), "profile-bench-"));
  const classes = DYNAMOLLM_CLASS_LENGTHS.filter((c) => c.classId === "MM" || c.classId === "LL");
  const grid: ProfileGrid = { model: "llama3.1-8b", perfModel: "llama3.1-8b", gpu: "A100-80GB", tps: [1], clocksMhz: [1410, 1005], classes, loadFractions: [0.3, 0.6], requestsPerPoint: o.requests, seed: 1, maxContext: 131072 };
  try {
    const engines = await openProfilerEngines({ model: grid.model, perfModel: grid.perfModel, engine: "sim", engineSpeed: 1, engineStartTimeoutMs: 60_000, gpu: "sim", gpuType: "A100-80GB", gpus: [0], simSpeed: o.simSpeed });
    const started = performance.now();
    const { table } = await runProfile({ grid, engines, out: join(dir, "profile.json") });
    const seconds = (performance.now() - started) / 1e3;
    return {
      rows_per_minute: Math.round((table.rows.length / (seconds / 60)) * 10) / 10,
      rows: table.rows.length,
      stable_rows: table.rows.filter((r) => r.stable).length,
      seconds: Math.round(seconds * 10) / 10,
      inputs: { grid, sim_speed: o.simSpeed, simulated: true },
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
