import type { LengthPair } from "../../src/core/data/azure-trace.ts";
import { GREENSERVE_TABLE_I } from "../../src/core/workload/length-generators.ts";

/**
 * GreenServe sweeps one grid of arrival rates (10-60 req/s) over both its datasets: ShareGPT, the
 * heavier in prompt and in answer (Table I: 280 / 191 tokens on average), and LMSYS-Chat-1M, the
 * lighter. A trace heavier than both at either stage would saturate the 2P2D cluster at most of
 * those rates, where no system meets its SLO and "energy at equal attainment" compares nothing
 * (the conversation trace, 1155 prompt tokens on average, meets 0.5% of its SLOs from 20 req/s
 * on). So the grid is divided by how much heavier the trace is than ShareGPT at its heavier stage,
 * its mean prompt or mean answer, and kept as it is for a trace no heavier than ShareGPT at
 * either, as the paper keeps it for LMSYS.
 *
 * @example
 * rateGridScale([{ inputTokens: 1120, outputTokens: 191 }]); // 4 (prompts 4x ShareGPT's: rates 2.5-15 req/s)
 */
export function rateGridScale(lengths: readonly LengthPair[]): number {
  if (lengths.length === 0) return 1;
  const mean = (pick: (l: LengthPair) => number) => lengths.reduce((s, l) => s + pick(l), 0) / lengths.length;
  const reference = GREENSERVE_TABLE_I.sharegpt;
  return Math.max(1, mean((l) => l.inputTokens) / reference.input.mean, mean((l) => l.outputTokens) / reference.output.mean);
}
