import type { LengthPair } from "../data/azure-trace.ts";
import type { FreeshProfiles } from "../data/freesh-profiles.ts";
import { gpuSpecs } from "../model/gpu-specs.ts";
import { llmSpecs } from "../model/llm-specs.ts";
import { DYNAMOLLM_CLASS_LENGTHS } from "../profiling/class-lengths.ts";
import { a100SweetSpot } from "./a100-sweet-spot.ts";
import { DYNAMOLLM_TABLE_I, paperMeetsSlo } from "./dynamollm-table1.ts";
import { energyOptimalConfig, type InstanceLayout } from "./energy-optimal-config.ts";
import { freeshMeasuredPoints, summariseMeasured } from "./freesh-measured.ts";
import { splitwiseAccuracy } from "./splitwise-accuracy.ts";
import type { SplitwiseRow } from "./splitwise-rows.ts";

/** DynamoLLM §III measures one instance per (TP, clock) under the whole 2000 TPS: see `InstanceLayout`. */
export const DYNAMOLLM_LAYOUT: InstanceLayout = { kind: "one-instance" };
const TABLE_I_TPS = [2, 4, 8];
const TABLE_I_CLOCKS_MHZ = [800, 1200, 1600, 1980];

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

/** FREESH's measured vLLM profile and the trace whose lengths fill its bins (see `freeshMeasuredPoints`). */
export interface FreeshMeasurements {
  profiles: FreeshProfiles;
  lengths: readonly LengthPair[];
}

/**
 * Runs every calibration check of the performance and power model against its published target,
 * and reports (no goal) how the model does at FREESH's measured operating points under both engine
 * schedulings.
 */
export function calibrationReport(splitwise: readonly SplitwiseRow[], freesh: FreeshMeasurements, o: CalibrationOptions) {
  const sw = splitwiseAccuracy(splitwise);
  const a100 = a100SweetSpot();
  const llm = llmSpecs["llama2-70b"];
  const gpu = gpuSpecs["H100-80GB"];
  const classes = DYNAMOLLM_TABLE_I.map((row) => {
    const cls = DYNAMOLLM_CLASS_LENGTHS.find((c) => c.classId === row.classId)!;
    const r = energyOptimalConfig({ llm, gpu, cls, tokensPerSecond: 2000, layout: DYNAMOLLM_LAYOUT, tps: TABLE_I_TPS, clocksMhz: TABLE_I_CLOCKS_MHZ, sloMultiple: 5, referenceTp: 8, requests: o.requests, seed: o.seed });
    const ours = r.best ? { tp: r.best.tp, mhz: r.best.mhz } : null;
    // Cells where our SLO verdict differs from Table I's (grey box or not): where the model is off.
    const disagree = r.evaluations.filter((e) => e.meetsSlo !== paperMeetsSlo(row, e.tp, e.mhz));
    const cell = (e: { tp: number; mhz: number; meetsSlo: boolean }) => `TP${e.tp}@${e.mhz}:${e.meetsSlo ? "ours-only" : "paper-only"}`;
    return {
      classId: row.classId,
      paper: row.best,
      ours,
      match: ours !== null && ours.tp === row.best.tp && ours.mhz === row.best.mhz,
      feasible_agreement: r.evaluations.length - disagree.length,
      feasible_disagreements: disagree.map(cell),
    };
  });
  const matches = classes.filter((c) => c.match).length;
  const cells = classes.length * TABLE_I_TPS.length * TABLE_I_CLOCKS_MHZ.length;
  const feasibleAgreement = classes.reduce((n, c) => n + c.feasible_agreement, 0);
  const g = CALIBRATION_GOALS;
  const within = (x: number, [lo, hi]: readonly [number, number]) => x >= lo && x <= hi;
  return {
    simulated: true,
    splitwise: sw,
    a100_8b: a100,
    freesh_vllm: freeshVllm(freesh, o),
    dynamollm_table1: { matches, of: classes.length, feasible_agreement: feasibleAgreement, feasible_cells: cells, layout: DYNAMOLLM_LAYOUT.kind, seed: o.seed, requests_per_config: o.requests, classes },
    goals_met: {
      splitwise: sw.prompt_ape_p50 <= g.ape_p50_max && sw.token_ape_p50 <= g.ape_p50_max && sw.prompt_ape_p90 <= g.ape_p90_max && sw.token_ape_p90 <= g.ape_p90_max,
      a100_sweet_spot: within(a100.sweet_spot_mhz, g.sweet_spot_mhz),
      a100_itl_change: within(a100.itl_change_1005_to_1410, g.itl_change),
      a100_energy_change: within(a100.energy_change_1005_to_1410, g.energy_change),
      dynamollm_table1: matches >= g.dynamollm_matches_min,
    },
  };
}

/** Medians of model / measured at FREESH's max-QPS points, per GPU kind, for each engine scheduling. */
function freeshVllm(freesh: FreeshMeasurements, o: CalibrationOptions) {
  const at = (scheduling: "prefill-first" | "chunked") => summariseMeasured(freeshMeasuredPoints(llmSpecs["llama3-70b"], freesh.profiles, freesh.lengths, { scheduling, requests: 400, seed: o.seed }));
  return { model: "llama3-70b", at: "each measured max QPS, top clock", prefill_first: at("prefill-first"), chunked: at("chunked") };
}
