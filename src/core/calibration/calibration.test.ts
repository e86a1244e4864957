import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { gpuSpecs } from "../model/gpu-specs.ts";
import { llmSpecs } from "../model/llm-specs.ts";
import { DYNAMOLLM_CLASS_LENGTHS } from "../profiling/class-lengths.ts";
import { a100SweetSpot } from "./a100-sweet-spot.ts";
import { CALIBRATION_GOALS, DYNAMOLLM_LAYOUT } from "./calibration-report.ts";
import { DYNAMOLLM_TABLE_I, paperMeetsSlo } from "./dynamollm-table1.ts";
import { energyOptimalConfig } from "./energy-optimal-config.ts";
import { splitwiseAccuracy } from "./splitwise-accuracy.ts";
import { parseSplitwise } from "./splitwise-rows.ts";

const file = resolve(process.cwd(), "data/splitwise/perf_model.csv");
const g = CALIBRATION_GOALS;

describe("calibration against splitwise perf_model.csv (Llama2-70B, A100/H100, TP 2/4/8)", () => {
  const accuracy = splitwiseAccuracy(parseSplitwise(readFileSync(file, "utf8"), file));

  it("uses the measured rows, leaving out only batches beyond the KV cache", () => {
    expect(accuracy.rows + accuracy.excluded_rows).toBe(630);
    expect(accuracy.excluded_rows).toBeLessThanOrEqual(10);
  });

  it("prompt and token times: median APE <= 10%, p90 <= 30%", () => {
    expect(accuracy.prompt_ape_p50).toBeLessThanOrEqual(g.ape_p50_max);
    expect(accuracy.token_ape_p50).toBeLessThanOrEqual(g.ape_p50_max);
    expect(accuracy.prompt_ape_p90).toBeLessThanOrEqual(g.ape_p90_max);
    expect(accuracy.token_ape_p90).toBeLessThanOrEqual(g.ape_p90_max);
  });

  it("rejects a malformed row naming file, line and field", () => {
    const text = "model,hardware,prompt_size,batch_size,token_size,peak_power,average_power,prompt_time,token_time,e2e_time,tensor_parallel\nllama2-70b,a100-80gb,512,1,128,1,0.7,abc,54.8,7168,2\n";
    expect(() => parseSplitwise(text, "perf.csv")).toThrow(/perf\.csv line 2: field prompt_time/);
  });
});

describe("calibration against GreenServe (A100, Llama-3.1-8B decode, moderate batch)", () => {
  const r = a100SweetSpot();
  it("puts the energy sweet spot within 905..1105 MHz", () => {
    expect(r.sweet_spot_mhz).toBeGreaterThanOrEqual(g.sweet_spot_mhz[0]);
    expect(r.sweet_spot_mhz).toBeLessThanOrEqual(g.sweet_spot_mhz[1]);
  });
  it("trades about -20% ITL for about +50% energy from 1005 to 1410 MHz", () => {
    expect(r.itl_change_1005_to_1410).toBeGreaterThanOrEqual(g.itl_change[0]);
    expect(r.itl_change_1005_to_1410).toBeLessThanOrEqual(g.itl_change[1]);
    expect(r.energy_change_1005_to_1410).toBeGreaterThanOrEqual(g.energy_change[0]);
    expect(r.energy_change_1005_to_1410).toBeLessThanOrEqual(g.energy_change[1]);
  });
});

describe("DynamoLLM Table I experiment on the model (one instance under 2000 TPS)", () => {
  const search = (classId: string, tps: number[], clocksMhz: number[]) => {
    const cls = DYNAMOLLM_CLASS_LENGTHS.find((c) => c.classId === classId)!;
    return energyOptimalConfig({ llm: llmSpecs["llama2-70b"], gpu: gpuSpecs["H100-80GB"], cls, tokensPerSecond: 2000, layout: DYNAMOLLM_LAYOUT, tps, clocksMhz, sloMultiple: 5, referenceTp: 8, requests: 300, seed: 7 });
  };
  const row = (classId: string) => DYNAMOLLM_TABLE_I.find((r) => r.classId === classId)!;

  it("rules out every cell Table I rules out for TP2 on medium and long classes and TP4 on LM, LL", () => {
    for (const [classId, tps] of [["MM", [2]], ["ML", [2]], ["LS", [2]], ["LM", [2, 4]], ["LL", [2, 4]]] as const) {
      for (const e of search(classId, [...tps], [800, 1200, 1600, 1980]).evaluations) {
        expect(paperMeetsSlo(row(classId), e.tp, e.mhz)).toBe(false);
        expect(e.meetsSlo, `${classId} TP${e.tp}@${e.mhz}`).toBe(false);
      }
    }
  });

  it("finds TP8 at max clock within the SLO for every class, as Table I does", () => {
    for (const { classId } of DYNAMOLLM_TABLE_I) expect(search(classId, [8], [1980]).best, classId).toBeDefined();
  });

  it("lays a configuration out on the server when asked: 4 x TP2 share the load and keep up with LL where one TP2 cannot", () => {
    const cls = DYNAMOLLM_CLASS_LENGTHS.find((c) => c.classId === "LL")!;
    const base = { llm: llmSpecs["llama2-70b"], gpu: gpuSpecs["H100-80GB"], cls, tokensPerSecond: 2000, tps: [2], clocksMhz: [1980], sloMultiple: 5, referenceTp: 8, requests: 200, seed: 7 };
    const one = energyOptimalConfig({ ...base, layout: { kind: "one-instance" } }).evaluations[0]!;
    const server = energyOptimalConfig({ ...base, layout: { kind: "fill-server", gpus: 8 } }).evaluations[0]!;
    expect(server.ttftSlowdownP99).toBeLessThan(one.ttftSlowdownP99 / 2);
  });
});
