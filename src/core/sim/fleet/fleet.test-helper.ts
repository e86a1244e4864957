import { gpuSpecs } from "../../model/gpu-specs.ts";
import { llmSpecs } from "../../model/llm-specs.ts";
import { DYNAMOLLM_CLASS_LENGTHS } from "../../profiling/class-lengths.ts";
import { virtualProfile } from "../../profiling/virtual-profiler.ts";
import type { ClassId } from "../../schemas/ids.ts";
import type { ProfileRow } from "../../schemas/profile.ts";

/** A small virtual profile of Llama 3.1 8B on one A100 (TP1) for fleet-simulator tests. */
export function smallA100Profile(classes: readonly ClassId[], clocksMhz: number[], loadFractions: number[]): ProfileRow[] {
  return virtualProfile({
    llm: llmSpecs["llama3.1-8b"],
    gpu: gpuSpecs["A100-80GB"],
    tps: [1],
    clocksMhz,
    classes: DYNAMOLLM_CLASS_LENGTHS.filter((c) => classes.includes(c.classId as ClassId)),
    loadFractions,
    requestsPerPoint: 60,
    seed: 2,
  }).rows;
}
