import { readFileSync } from "node:fs";
import { setImmediate as nextTurn } from "node:timers/promises";
import { z } from "zod";
import type { GpuSpec } from "../../src/core/model/gpu-specs.ts";
import type { LlmSpec } from "../../src/core/model/llm-specs.ts";
import { DYNAMOLLM_CLASS_LENGTHS } from "../../src/core/profiling/class-lengths.ts";
import { virtualProfile } from "../../src/core/profiling/virtual-profiler.ts";
import { ProfileTable, type ProfileRow } from "../../src/core/schemas/profile.ts";
import type { ClockLock } from "../gpu-state/tracked-gpu-backend.ts";
import { gridClockWithin } from "../../src/core/model/clock-grid.ts";
import { DEFAULT_SLO_CLASS } from "./instance-slo.ts";

/** Load levels of a virtual profile, as fractions of the instance's estimated max-clock capacity. */
const LOAD_FRACTIONS = [0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9];
const CLOCKS = 5;
const REQUESTS_PER_POINT = 100;
const SEED = 1;

/**
 * Reads a profile table file (`greenference profile` writes them); the error names the file and the bad field.
 *
 * @example
 * new ControlProfiles(loadProfileTable("profiles/llama3.1-8b-h100.json"));
 */
export function loadProfileTable(path: string): ProfileTable {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    throw new Error(`cannot read the profile table ${path}: ${(error as Error).message}`);
  }
  const parsed = ProfileTable.safeParse(value);
  if (!parsed.success) throw new Error(`the profile table ${path} is not valid: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

/**
 * Profile rows for DynamoLLM's instance manager: from a profile table file when the agent was given
 * one, else a virtual profile of the instance's (model, GPU, TP) on the core's engine model, for its
 * class only and at 5 clocks spread over its plan bounds. A virtual profile takes a few hundred ms of
 * CPU; it is made once per key, one clock at a time with the event loop let go in between.
 *
 * @example
 * const profiles = new ControlProfiles();
 * await profiles.rowsFor(llm, gpu, 1, "MM", { minMhz: 1005, maxMhz: 1980 }); // 50 rows (5 clocks x 10 loads)
 */
export class ControlProfiles {
  private readonly virtual = new Map<string, Promise<ProfileRow[]>>();

  constructor(private readonly table?: ProfileTable) {}

  /** The table's rows of a model (by its fleet id, as `greenference agent profile` writes them) on `tp` x `gpuType`; none without a table. */
  measuredRows(model: string, gpuType: string, tp: number): ProfileRow[] {
    return (this.table?.rows ?? []).filter((r) => r.model === model && r.gpu === gpuType && r.tp === tp);
  }

  rowsFor(llm: LlmSpec, gpu: GpuSpec, tp: number, classId: string | undefined, bounds: ClockLock): Promise<ProfileRow[]> {
    if (this.table) {
      const rows = this.table.rows.filter((r) => r.model === llm.id && r.gpu === gpu.type && r.tp === tp);
      return rows.length > 0 ? Promise.resolve(rows) : Promise.reject(new Error(`the profile table has no rows for ${llm.id} on ${tp} x ${gpu.type}`));
    }
    const cls = DYNAMOLLM_CLASS_LENGTHS.find((c) => c.classId === classId) ?? DYNAMOLLM_CLASS_LENGTHS.find((c) => c.classId === DEFAULT_SLO_CLASS)!;
    const clocks = profileClocks(gpu, bounds);
    const key = `${llm.id}|${gpu.type}|${tp}|${cls.classId}|${clocks.join(",")}`;
    let rows = this.virtual.get(key);
    if (!rows) {
      rows = (async () => {
        const out: ProfileRow[] = [];
        for (const mhz of clocks) {
          await nextTurn();
          out.push(...virtualProfile({ llm, gpu, tps: [tp], clocksMhz: [mhz], classes: [cls], loadFractions: LOAD_FRACTIONS, requestsPerPoint: REQUESTS_PER_POINT, seed: SEED }).rows);
        }
        return out;
      })();
      this.virtual.set(key, rows);
    }
    return rows;
  }
}

/**
 * `CLOCKS` clocks evenly spread over `bounds`, on the GPU's clock grid.
 *
 * @example
 * profileClocks(gpuSpec("H100-80GB"), { minMhz: 1005, maxMhz: 1980 }); // [1005, 1245, 1485, 1740, 1980]
 */
export function profileClocks(gpu: GpuSpec, bounds: ClockLock): number[] {
  const clocks = Array.from({ length: CLOCKS }, (_, i) => gridClockWithin(gpu, bounds.minMhz + ((bounds.maxMhz - bounds.minMhz) * i) / (CLOCKS - 1), bounds));
  return [...new Set(clocks)];
}
