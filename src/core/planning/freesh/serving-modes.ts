import type { LengthPair } from "../../data/azure-trace.ts";
import type { FreeshProfiles } from "../../data/freesh-profiles.ts";
import { gpuSpec, type GpuSpec } from "../../model/gpu-specs.ts";

/** One of FREESH's work modes as the engine model runs it: a GPU type at a TP degree. */
export interface ServingMode {
  name: string;
  gpu: GpuSpec;
  tp: number;
}

/** The GPU types behind profiles.json's GPU kinds. */
const GPU_OF_KIND: Record<string, string> = { A100: "A100-80GB", H100: "H100-80GB" };

/** profiles.json's modes (e.g. A100x4) as (GPU, TP); each uses one GPU kind. */
export function servingModes(profiles: FreeshProfiles): ServingMode[] {
  return profiles.modes.map((m) => {
    const kinds = Object.entries(m.gpus).filter(([, n]) => n > 0);
    if (kinds.length !== 1) throw new Error(`mode ${m.name}: expected one GPU kind, got ${kinds.length}`);
    const [kind, tp] = kinds[0]!;
    return { name: m.name, gpu: gpuSpec(GPU_OF_KIND[kind] ?? kind), tp };
  });
}

/** The requests of one (partition, type) bin: FREESH counts a length equal to the threshold as long. */
export function binLengths(lengths: readonly LengthPair[], thresholds: { input: number; output: number }, type: number): LengthPair[] {
  const longIn = type >= 2;
  const longOut = type % 2 === 1;
  return lengths.filter((l) => l.inputTokens >= thresholds.input === longIn && l.outputTokens >= thresholds.output === longOut);
}
