import { EngineInstance } from "../../engine/engine-instance.ts";
import { kvCapacityTokens } from "../../engine/kv-capacity.ts";
import { gpuSpecs } from "../../model/gpu-specs.ts";
import { llmSpecs } from "../../model/llm-specs.ts";
import { DYNAMOLLM_CLASS_LENGTHS, sampleLengths } from "../../profiling/class-lengths.ts";
import { virtualProfile } from "../../profiling/virtual-profiler.ts";
import { seededRng } from "../../ports/rng.ts";
import type { ClassId, SiteId } from "../../schemas/ids.ts";
import { Plan, type GatewayBalance, type QueueDiscipline } from "../../schemas/plan.ts";
import { ClassScheme } from "../../schemas/request-class.ts";
import { ProfileIndex } from "../fleet/profile-index.ts";
import type { FleetPlanner, FleetSimConfig } from "../fleet/fleet-types.ts";
import { constantSeries } from "../fleet/time-series.ts";
import { workloadFleetRequests } from "./fleet-requests.ts";
import { PlanReplicas, type ReplicaFactory } from "./plan-replicas.ts";
import { Replica } from "./replica.ts";
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

/** Site dc: four test GPUs with ample power. */
export const TEST_SITE = { id: "dc" as SiteId, gpu: TEST_GPU, gpus: 4, power: constantSeries("power", "W", 4 * TEST_GPU.tdpW * 2, 3600), carbon: constantSeries("carbon", "gCO2/kWh", 300, 3600) };

/** A plan of TP1 instances at the top clock on site dc, those `routed` (all by default) routed class SS with equal weights, its gateway's `balance` and `queue` as given. */
export function testPlan(version: number, ids: string[], routed = ids, gateway: { balance?: GatewayBalance; queue?: QueueDiscipline } = {}): Plan {
  return Plan.parse({
    version,
    createdAtMs: 0,
    validUntilMs: 3_600_000,
    policy: "greenference",
    sites: [{ site: "dc", powerCapW: 10_000, ...gateway, instances: ids.map((id, i) => ({ id, model: TEST_LLM.id, variant: "base", tp: 1, gpus: [i], clock: { mode: "locked", mhz: TEST_GPU.maxMhz } })) }],
    routing: { SS: routed.map((id) => ({ site: "dc", instance: id, weight: 1 })) },
  });
}

/** Site dc's replicas as the per-request simulator runs them (instances start in 60 s), before any plan. */
export function testReplicas(): PlanReplicas {
  let next = 0;
  const make: ReplicaFactory = (site, entry, readyAtS, nowS) => {
    const engine = new EngineInstance({ llm: TEST_LLM, gpu: site.gpu, tp: entry.tp, clock: entry.mhz }, [], []);
    engine.idleUntil(nowS);
    return new Replica(next++, site.id, entry.key, entry.model, entry.tp, entry.mhz, readyAtS, kvCapacityTokens(TEST_LLM, site.gpu, entry.tp), engine, entry.classes);
  };
  const counts = { instanceStarts: 0, tpChanges: 0, clockChanges: 0 };
  return new PlanReplicas([TEST_SITE], new ProfileIndex(TEST_PROFILE), { startS: 60, tpChangeS: 90, clockChangeS: 0 }, counts, make, true);
}
