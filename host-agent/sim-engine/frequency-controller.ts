import type { IterationState } from "../../src/core/engine/engine-instance.ts";
import type { GpuSpec } from "../../src/core/model/gpu-specs.ts";
import type { LlmSpec } from "../../src/core/model/llm-specs.ts";
import type { EngineLaunch } from "../engines/engine.ts";
import type { ClockLock } from "../gpu-state/tracked-gpu-backend.ts";

export type { IterationState };

/**
 * A local frequency controller (EcoFreq, MIAD, ...): picks the clock of the next iteration from
 * what the engine is about to run, within the plan's bounds. Called synchronously once per
 * iteration by a simulated engine, so it must be quick (GreenServe budgets ~0.5 ms); the engine
 * locks its GPUs to the answer (clamped into the bounds and snapped to the clock grid).
 */
export interface FrequencyController {
  chooseMhz(state: IterationState, bounds: ClockLock): number;
}

/** The engine a controller is made for: its launch and the performance model's specs. */
export interface ControlledEngine {
  launch: EngineLaunch;
  llm: LlmSpec;
  gpu: GpuSpec;
}

/**
 * Makes the controller for an instance whose plan clock is a policy; undefined runs it at the clock
 * its GPUs are locked at (the top of its bounds, or what a controller outside the engine set).
 */
export type FrequencyControllerFactory = (policy: "ecofreq" | "miad" | "instance-manager", bounds: ClockLock, engine: ControlledEngine) => FrequencyController | undefined;

