import type { GpuSpec } from "../../src/core/model/gpu-specs.ts";
import type { LlmSpec } from "../../src/core/model/llm-specs.ts";
import { DYNAMOLLM_CLASS_LENGTHS } from "../../src/core/profiling/class-lengths.ts";
import { isolatedLatencySlo } from "../../src/core/profiling/isolated-slo.ts";
import type { Slo } from "../../src/core/schemas/request-class.ts";

/** The class whose SLO an instance is held to when neither its plan nor its traffic names one. */
export const DEFAULT_SLO_CLASS = "MM";

/** How the agent sets the SLO its local controllers hold instances to. */
export interface SloSettings {
  /** Multiple of a request's isolated latency (DESIGN.md section 6: 5x). */
  multiple: number;
  /** Fixed TTFT / TBT targets, ms, instead of the derived ones. */
  ttftMs?: number;
  tbtMs?: number;
}

/**
 * The SLO of class `classId` on an instance of `llm` at `tp` x `gpu`: `multiple` times what a
 * request of the class's mean lengths takes alone on that configuration at its max clock (the
 * DYNAMOLLM 3x3 classes; an unknown class counts as MM), with any fixed targets taking precedence.
 * The reference is the instance's own configuration rather than TP8, so a controller asks of an
 * instance only what it can meet unloaded.
 *
 * @example
 * instanceSlo(llmSpec("llama3.1-8b"), gpuSpec("H100-80GB"), 1, "MM", { multiple: 5 }); // { ttftMs: 73.6, tbtMs: 27.0, e2eMs: 5438 }
 */
export function instanceSlo(llm: LlmSpec, gpu: GpuSpec, tp: number, classId: string | undefined, s: SloSettings): Slo {
  const cls = DYNAMOLLM_CLASS_LENGTHS.find((c) => c.classId === classId) ?? DYNAMOLLM_CLASS_LENGTHS.find((c) => c.classId === DEFAULT_SLO_CLASS)!;
  const derived = isolatedLatencySlo(llm, gpu, cls, s.multiple, tp);
  return { ...derived, ttftMs: s.ttftMs ?? derived.ttftMs, tbtMs: s.tbtMs ?? derived.tbtMs };
}
