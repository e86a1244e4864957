import type { ClockLock } from "../gpu-state/tracked-gpu-backend.ts";
import { TrackedGpuBackend } from "../gpu-state/tracked-gpu-backend.ts";
import { SimulatedGpuBackend } from "../gpu/index.ts";
import { ClockActuator } from "./clock-actuator.ts";
import type { ControlScope } from "./local-controller.ts";

/** Simulated GPUs on a hand-moved clock (ms), with the agent's tracking wrapper and an actuator. */
export async function simulatedGpus(count: number, type = "H100-80GB") {
  const clock = { ms: 1_000_000 };
  const hardware = new SimulatedGpuBackend({ type, count, now: () => clock.ms });
  const gpus = new TrackedGpuBackend(hardware);
  await gpus.init();
  return { clock, hardware, gpus, actuator: new ClockActuator(gpus) };
}

/** A control scope whose currency and allowed bounds the test flips through `state`. */
export function testScope(actuator: ClockActuator, clock: { ms: number }, o: { instanceId: string; gpus: number[]; bounds: ClockLock }) {
  const state = { current: true, floor: false };
  const scope: ControlScope = {
    ...o,
    actuator,
    now: () => clock.ms,
    isCurrent: () => state.current,
    allowed: () => (state.floor ? { minMhz: o.bounds.minMhz, maxMhz: o.bounds.minMhz } : o.bounds),
  };
  return { scope, state };
}

/** A finished request for the request log. */
export function served(instanceId: string, endMs: number, ttftMs: number, tbtMs: number, classId = "MM", e2eMs = ttftMs + 49 * tbtMs) {
  return { instanceId, classId, endMs, ttftMs, tbtMs, e2eMs, energyJ: 1, promptTokens: 100, completionTokens: 50 };
}
