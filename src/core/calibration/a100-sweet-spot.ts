import { gpuSpecs } from "../model/gpu-specs.ts";
import { decodeTime } from "../model/iteration-time.ts";
import { llmSpecs } from "../model/llm-specs.ts";
import { throttle } from "../model/power.ts";

/** "Moderate batch" of GreenServe Fig. 5b: 64 sequences holding 1024 tokens each on average. */
export const MODERATE_BATCH = 64;
export const MEAN_CONTEXT_TOKENS = 1024;

export interface SweetSpotCheck {
  sweet_spot_mhz: number;
  itl_change_1005_to_1410: number;
  energy_change_1005_to_1410: number;
}

/**
 * GreenServe §III-B on the model: Llama-3.1-8B decode on one A100 at moderate batch. The sweet
 * spot is the supported clock (15 MHz steps from 810 MHz) with the least energy per output token.
 */
export function a100SweetSpot(): SweetSpotCheck {
  const gpu = gpuSpecs["A100-80GB"];
  const llm = llmSpecs["llama3.1-8b"];
  const step = (mhz: number) => {
    const it = throttle(gpu, mhz, (f) => decodeTime({ llm, gpu, tp: 1, mhz: f }, MODERATE_BATCH, MODERATE_BATCH * MEAN_CONTEXT_TOKENS));
    return { ms: it.ms, joulesPerToken: it.energyJ / MODERATE_BATCH };
  };
  let best = { mhz: gpu.maxMhz, j: Infinity };
  for (let mhz = 810; mhz <= gpu.maxMhz; mhz += gpu.clockStepMhz) {
    const j = step(mhz).joulesPerToken;
    if (j < best.j) best = { mhz, j };
  }
  const low = step(1005);
  const high = step(1410);
  return {
    sweet_spot_mhz: best.mhz,
    itl_change_1005_to_1410: high.ms / low.ms - 1,
    energy_change_1005_to_1410: high.joulesPerToken / low.joulesPerToken - 1,
  };
}
