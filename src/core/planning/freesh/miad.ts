import type { IterationState } from "../../engine/engine-instance.ts";

/** FREESH's tuned MIAD (Appx. D.7, Table 10): x2.0 up, -100 MHz down, once a second. */
export const FREESH_MIAD = { increaseFactor: 2, decreaseStepMhz: 100, periodS: 1 } as const;

export interface MiadConfig {
  minMhz: number;
  maxMhz: number;
  /** M of Eq. (5a) (default 2.0). */
  increaseFactor?: number;
  /** δ of Eq. (5b), MHz (default 100). */
  decreaseStepMhz?: number;
  /** Round to the GPU's supported clock step (e.g. 15 MHz), staying within the bounds. */
  stepMhz?: number;
}

/**
 * One MIAD update (FREESH Eq. 5): on an SLO breach f <- min(M f, f_max) (multiplicative increase),
 * otherwise f <- max(f - δ, f_min) (additive decrease).
 *
 * @example
 * miadNext(600, true, { minMhz: 210, maxMhz: 1410 });  // 1200
 * miadNext(600, false, { minMhz: 210, maxMhz: 1410 }); // 500
 */
export function miadNext(mhz: number, breach: boolean, c: MiadConfig): number {
  const next = breach ? Math.min(mhz * (c.increaseFactor ?? FREESH_MIAD.increaseFactor), c.maxMhz) : Math.max(mhz - (c.decreaseStepMhz ?? FREESH_MIAD.decreaseStepMhz), c.minMhz);
  if (!c.stepMhz) return next;
  const snapped = Math.round(next / c.stepMhz) * c.stepMhz;
  return Math.min(c.maxMhz, Math.max(c.minMhz, snapped));
}

/**
 * FREESH's per-instance frequency controller: call `tick` once a second with whether the last
 * second breached the SLO thresholds; it returns the clock to lock next. Starts at the top clock
 * (the safe side) unless told otherwise.
 *
 * @example
 * const miad = new MiadController({ minMhz: 210, maxMhz: 1410 });
 * miad.tick(false); // 1310
 */
export class MiadController {
  mhz: number;
  constructor(readonly config: MiadConfig, initialMhz = config.maxMhz) {
    this.mhz = Math.min(config.maxMhz, Math.max(config.minMhz, initialMhz));
  }

  tick(breach: boolean): number {
    this.mhz = miadNext(this.mhz, breach, this.config);
    return this.mhz;
  }
}

/**
 * MIAD as an engine clock hook: before each iteration, the controller takes one step per whole
 * period elapsed since its last step. Only the step that reaches the current time sees the
 * engine's state; earlier periods had no iteration start (the engine was idle) and count as no
 * breach.
 *
 * @example
 * simulateEngine({ llm, gpu, tp: 2, clock: miadClockHook(new MiadController(bounds), (s) => s.waiting > 0) }, requests);
 */
export function miadClockHook(controller: MiadController, breached: (state: IterationState) => boolean, periodS: number = FREESH_MIAD.periodS): (state: IterationState) => number {
  let nextTickS = periodS;
  return (state) => {
    while (state.nowS >= nextTickS) {
      nextTickS += periodS;
      controller.tick(state.nowS < nextTickS && breached(state));
    }
    return controller.mhz;
  };
}
