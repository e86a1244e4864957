import { gpuSpecs } from "../model/gpu-specs.ts";
import { llmSpecs } from "../model/llm-specs.ts";
import { DYNAMOLLM_CLASS_LENGTHS } from "../profiling/class-lengths.ts";
import { a100SweetSpot } from "./a100-sweet-spot.ts";
import { DYNAMOLLM_TABLE_I } from "./dynamollm-table1.ts";
import { energyOptimalConfig } from "./energy-optimal-config.ts";
import { splitwiseAccuracy } from "./splitwise-accuracy.ts";
import type { SplitwiseRow } from "./splitwise-rows.ts";

/** The calibration checks and their goals (issue "Foundation", DESIGN.md section 5). */
export const CALIBRATION_GOALS = {
  ape_p50_max: 0.1,
  ape_p90_max: 0.3,
  sweet_spot_mhz: [905, 1105],
  itl_change: [-0.3, -0.12],
  energy_change: [0.3, 0.7],
  dynamollm_matches_min: 6,
} as const;

export interface CalibrationOptions {
  seed: number;
  /** Requests per (class, TP, clock) run of the DynamoLLM experiment. */
  requests: number;
}

/** Runs every calibration check of the performance and power model against its published target. */
export function calibrationReport(splitwise: readonly SplitwiseRow[], o: CalibrationOptions) {
  const sw = splitwiseAccuracy(splitwise);
  const a100 = a100SweetSpot();
  const llm = llmSpecs["llama2-70b"];
  const gpu = gpuSpecs["H100-80GB"];
  const classes = DYNAMOLLM_TABLE_I.map((row) => {
    const cls = DYNAMOLLM_CLASS_LENGTHS.find((c) => c.classId === row.classId)!;
    const r = energyOptimalConfig({ llm, gpu, cls, tokensPerSecond: 2000, serverGpus: 8, tps: [2, 4, 8], clocksMhz: [800, 1200, 1600, 1980], sloMultiple: 5, requests: o.requests, seed: o.seed });
    const ours = r.best ? { tp: r.best.tp, mhz: r.best.mhz } : null;
    return { classId: row.classId, paper: row.best, ours, match: ours !== null && ours.tp === row.best.tp && ours.mhz === row.best.mhz };
  });
  const matches = classes.filter((c) => c.match).length;
  const g = CALIBRATION_GOALS;
  const within = (x: number, [lo, hi]: readonly [number, number]) => x >= lo && x <= hi;
  return {
    simulated: true,
    splitwise: sw,
    a100_8b: a100,
    dynamollm_table1: { matches, of: classes.length, seed: o.seed, requests_per_config: o.requests, classes },
    goals_met: {
      splitwise: sw.prompt_ape_p50 <= g.ape_p50_max && sw.token_ape_p50 <= g.ape_p50_max && sw.prompt_ape_p90 <= g.ape_p90_max && sw.token_ape_p90 <= g.ape_p90_max,
      a100_sweet_spot: within(a100.sweet_spot_mhz, g.sweet_spot_mhz),
      a100_itl_change: within(a100.itl_change_1005_to_1410, g.itl_change),
      a100_energy_change: within(a100.energy_change_1005_to_1410, g.energy_change),
      dynamollm_table1: matches >= g.dynamollm_matches_min,
    },
  };
}
