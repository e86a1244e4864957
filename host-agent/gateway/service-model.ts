import { gpuSpec } from "../../src/core/model/gpu-specs.ts";
import { llmSpec, type LlmSpec } from "../../src/core/model/llm-specs.ts";
import { isolatedLatencyS } from "../../src/core/planning/freesh/llf.ts";
import { decodeFreqSet, modelDecodeFreq } from "../../src/core/scheduling/decode-target.ts";
import { isolatedServiceMs } from "../../src/core/scheduling/service-time.ts";
import type { ClockSetting } from "../../src/core/schemas/plan.ts";
import type { EngineLaunch } from "../engines/engine.ts";

export interface ServiceModelOptions {
  /** GPU type per site GPU index. */
  gpuTypes: readonly string[];
  /** Simulated seconds per wall second (1 on real hardware): predictions are in wall time. */
  speed: number;
  /** TTFT and TBT assumed for a model the performance model does not know. */
  fallback: { ttftMs: number; tbtMs: number };
  /** The plan's clock setting of an instance. */
  clockOf(instanceId: string): ClockSetting | undefined;
}

/** What the gateway predicts for one replica. */
export interface ReplicaPrediction {
  /** FREESH's Lat of a request alone on the replica, wall ms. */
  isolatedMs(inputTokens: number, outputTokens: number): number;
  /** EcoRoute's freq(m) for the replica's decode batches, and its GPU's decode GEMM tile rows; absent when the model is unknown. */
  decodeFreq?: { key: string; freq: (requests: number, kvTokens: number) => number; tileRows: number };
}

/**
 * Predictions from the performance model for a replica (its model, GPU type, TP and the plan's
 * clock: the locked clock, or the top of a controller's bounds), or from the configured TTFT/TBT
 * for models it does not know.
 *
 * @example
 * const predict = serviceModel({ gpuTypes: ["H100-80GB"], speed: 1, fallback: { ttftMs: 500, tbtMs: 50 }, clockOf: () => undefined });
 * predict(launch).isolatedMs(500, 200); // ~1100
 */
export function serviceModel(o: ServiceModelOptions): (launch: EngineLaunch) => ReplicaPrediction {
  return (launch) => {
    let llm: LlmSpec;
    try {
      if (launch.perfModel === undefined) throw new Error("unknown to the performance model");
      llm = llmSpec(launch.perfModel);
    } catch {
      return { isolatedMs: (_input, output) => isolatedLatencyS(output, o.fallback.tbtMs / 1e3, o.fallback.ttftMs / 1e3) * 1e3 };
    }
    const gpu = gpuSpec(o.gpuTypes[launch.gpus[0] ?? 0] ?? "H100-80GB");
    const clock = o.clockOf(launch.instanceId);
    const mhz = clock === undefined ? gpu.maxMhz : clock.mode === "locked" ? clock.mhz : clock.maxMhz;
    const ctx = { llm, gpu, tp: launch.tp };
    const freqs = decodeFreqSet(gpu, clock);
    return {
      isolatedMs: (input, output) => isolatedServiceMs({ ...ctx, mhz }, input, output) / o.speed,
      decodeFreq: { key: `${llm.id}|${gpu.type}|${launch.tp}|${freqs.join(",")}`, freq: modelDecodeFreq(ctx, freqs), tileRows: gpu.tileRows },
    };
  };
}
