import { carbonGrams, type CarbonOrigin } from "./carbon.ts";

/**
 * Per-token energy used when a site reports none. Orders of magnitude from published measurements
 * of LLM serving on A100/H100 (roughly 0.1 to a few J per generated token, depending on model size
 * and batching): 1 J per output token, and a tenth of that per prompt token because prefill
 * processes tokens in parallel. Whole-server energy, not GPU only. A site-reported figure always wins.
 */
export const DEFAULT_J_PER_OUTPUT_TOKEN = 1;
export const DEFAULT_J_PER_INPUT_TOKEN = 0.1;

/**
 * `measured`: the site split its GPUs' metered energy among its requests by their work;
 * `site`: the site reported a figure without saying it measured it (a simulated engine's model);
 * `estimate`: tokens x the per-token default.
 */
export type EnergySource = "measured" | "site" | "estimate";

/** The energy and carbon receipt of one request. */
export interface EnergyReceipt {
  energyJ: number;
  gco2e: number;
  carbonGPerKwh: number;
  carbonOrigin: CarbonOrigin;
  source: EnergySource;
}

export interface ReceiptInput {
  inputTokens: number;
  outputTokens: number;
  /** Joules the site reported for this request, if any. */
  reportedJ?: number | undefined;
  /** The site said its figure was measured (`usage.greenference.energy_source: "measured"`). */
  reportedMeasured?: boolean;
  carbonGPerKwh: number;
  carbonOrigin: CarbonOrigin;
}

/**
 * The receipt: the site's reported energy if it sent one, else tokens x the per-token defaults;
 * carbon = J / 3.6e6 x gCO2e/kWh.
 *
 * @example
 * energyReceipt({ inputTokens: 100, outputTokens: 200, carbonGPerKwh: 360, carbonOrigin: "fleet" });
 * // { energyJ: 210, gco2e: 0.021, source: "estimate", ... }
 */
export function energyReceipt(input: ReceiptInput): EnergyReceipt {
  const reported = input.reportedJ !== undefined && Number.isFinite(input.reportedJ) && input.reportedJ >= 0;
  const energyJ = reported ? input.reportedJ! : input.inputTokens * DEFAULT_J_PER_INPUT_TOKEN + input.outputTokens * DEFAULT_J_PER_OUTPUT_TOKEN;
  return {
    energyJ,
    gco2e: carbonGrams(energyJ, input.carbonGPerKwh),
    carbonGPerKwh: input.carbonGPerKwh,
    carbonOrigin: input.carbonOrigin,
    source: !reported ? "estimate" : input.reportedMeasured ? "measured" : "site",
  };
}
