import { exponential, type Rng } from "../ports/rng.ts";
import type { EngineRequest } from "../engine/engine-simulator.ts";

/** `count` requests arriving as a Poisson process at `rateRps`, lengths from `lengths`. */
export function poissonRequests(rng: Rng, rateRps: number, count: number, lengths: (rng: Rng) => { inputTokens: number; outputTokens: number }): EngineRequest[] {
  if (!(rateRps > 0)) throw new Error(`rate must be positive, got ${rateRps}`);
  const out: EngineRequest[] = [];
  let t = 0;
  for (let i = 0; i < count; i++) {
    t += exponential(rng, rateRps);
    out.push({ arrivalS: t, ...lengths(rng) });
  }
  return out;
}
