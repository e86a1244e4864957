import type { ClockSetting } from "../../src/core/schemas/plan.ts";
import type { ClockLock } from "../gpu-state/tracked-gpu-backend.ts";
import type { ClockActuator } from "./clock-actuator.ts";

/** The clock policies of a plan. */
export type ClockPolicy = Extract<ClockSetting, { mode: "policy" }>["policy"];

/**
 * What a controller outside the engine works on: the GPUs of one planned instance (or replica), the
 * plan's bounds, and the means to lock them. Everything time-related comes in here, so a test
 * drives a controller by calling `tick` with its own clock.
 */
export interface ControlScope {
  instanceId: string;
  gpus: readonly number[];
  /** The plan's clock bounds for the instance. */
  bounds: ClockLock;
  actuator: ClockActuator;
  /** Site clock, ms (simulated time on a simulated site). */
  now(): number;
  /** False while a plan is being applied or once the instance's setting changed: hands off the clocks. */
  isCurrent(): boolean;
  /** The bounds the controller may use now: the plan's, or the lower bound alone while the power ladder holds clocks down. */
  allowed(): ClockLock;
}

/** A controller that runs every `periodMs` of site time, outside the engine. */
export interface LocalController {
  readonly policy: ClockPolicy;
  readonly scope: ControlScope;
  readonly periodMs: number;
  /** The clock it last set, MHz; null before its first decision. */
  readonly mhz: number | null;
  /** One decision, applied to the scope's GPUs unless the scope is no longer current. */
  tick(): Promise<void>;
  /** A lighter check between decisions, every `watchPeriodMs` of site time (DynamoLLM's instance manager: a queue building up). */
  watch?(): Promise<void>;
  readonly watchPeriodMs?: number;
}

/**
 * Locks the scope's GPUs at `mhz` within what is allowed now, unless the scope is stale; returns the clock set or null.
 *
 * @example
 * this.mhz = await applyClock(this.scope, 1402); // 1395 on an H100 within 1005-1590 MHz
 */
export async function applyClock(scope: ControlScope, mhz: number): Promise<number | null> {
  if (!scope.isCurrent()) return null;
  return scope.actuator.lock(scope.gpus, mhz, scope.allowed());
}
