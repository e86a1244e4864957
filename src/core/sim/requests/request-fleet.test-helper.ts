import { gpuSpecs } from "../../model/gpu-specs.ts";
import { llmSpecs } from "../../model/llm-specs.ts";
import { DYNAMOLLM_CLASS_LENGTHS, sampleLengths } from "../../profiling/class-lengths.ts";
import { virtualProfile } from "../../profiling/virtual-profiler.ts";
import { seededRng } from "../../ports/rng.ts";
import type { ClassId, SiteId } from "../../schemas/ids.ts";
import { ClassScheme } from "../../schemas/request-class.ts";
import type { FleetPlanner, FleetSimConfig } from "../fleet/fleet-types.ts";
import { constantSeries } from "../fleet/time-series.ts";
import { workloadFleetRequests } from "./fleet-requests.ts";
import type { RequestFleetConfig } from "./request-fleet-simulator.ts";

export const TEST_LLM = llmSpecs["llama3.1-8b"];
export const TEST_GPU = gpuSpecs["A100-80GB"];
/** DynamoLLM's Table IV bins. */
export const TEST_SCHEME = ClassScheme.parse({ name: "table-iv", inputEdges: [255, 1023], outputEdges: [99, 349], inputLabels: ["S", "M", "L"], outputLabels: ["S", "M", "L"] });
const CLASSES = ["SS", "MM"] as ClassId[];
/** The profile the planner and the fluid simulator read: the engine model at TP1 and the top clock, 300 requests a point. */
export const TEST_PROFILE = virtualProfile({ llm: TEST_LLM, gpu: TEST_GPU, tps: [1], clocksMhz: [TEST_GPU.maxMhz], classes: DYNAMOLLM_CLASS_LENGTHS.filter((c) => CLASSES.includes(c.classId as ClassId)), loadFractions: [0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6], requestsPerPoint: 300, seed: 2 }).rows;

/** Request lengths of the two classes, drawn as the profile draws them. */
export function testLengths(n: number): { inputTokens: number; outputTokens: number }[] {
  const rng = seededRng(5);
  return Array.from({ length: n }, (_, i) => sampleLengths(rng, DYNAMOLLM_CLASS_LENGTHS.find((c) => c.classId === CLASSES[i % CLASSES.length])!, TEST_LLM.maxContext));
}

/** One site of `gpus` A100s with ample power, the two classes at `rps` (SS three times MM's), `planner` planning. */
export function testFleet(o: { gpus: number; rps: number; durationS: number; planner: FleetPlanner; seed?: number }): RequestFleetConfig {
  const workload = { classes: CLASSES, rateRps: (_t: number, c: ClassId) => (c === "SS" ? 0.75 : 0.25) * o.rps };
  const cfg: FleetSimConfig = {
    sites: [{ id: "dc" as SiteId, gpu: TEST_GPU, gpus: o.gpus, power: constantSeries("power", "W", o.gpus * TEST_GPU.tdpW * 2, o.durationS), carbon: constantSeries("carbon", "gCO2/kWh", 300, o.durationS) }],
    workload,
    profile: TEST_PROFILE,
    model: TEST_LLM.id,
    slo: { SS: { ttftMs: 500, tbtMs: 100 }, MM: { ttftMs: 1000, tbtMs: 100 } } as FleetSimConfig["slo"],
    planner: o.planner,
    durationS: o.durationS,
    seed: o.seed ?? 11,
  };
  return { ...cfg, requests: workloadFleetRequests(workload, TEST_SCHEME, testLengths(6000), o.durationS, cfg.seed), scheme: TEST_SCHEME, llm: TEST_LLM };
}
