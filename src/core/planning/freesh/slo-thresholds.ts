/** Latency thresholds that count as an SLO breach for MIAD. */
export interface MiadThresholds {
  tbtMs: number;
  ttftMs: number;
  e2eS: number;
}

/**
 * FREESH Table 7 (Appx. D.2): per request type, TBT 150 ms everywhere, TTFT 300 ms for short and
 * 600 ms for long inputs, and E2E from the mean latencies measured per type.
 */
export const FREESH_MIAD_THRESHOLDS = {
  ss: { tbtMs: 150, ttftMs: 300, e2eS: 7 },
  sl: { tbtMs: 150, ttftMs: 300, e2eS: 27 },
  ls: { tbtMs: 150, ttftMs: 600, e2eS: 10 },
  ll: { tbtMs: 150, ttftMs: 600, e2eS: 30 },
} as const satisfies Record<string, MiadThresholds>;

/**
 * Table 7's rule for E2E thresholds on a measured profile (Appx. D.2: "derived from the average
 * end-to-end latencies empirically measured ... for each respective request type"): per type, the
 * mean of the latencies measured at each serving mode's max QPS, undefined where no mode serves
 * the type. On profiles.json's vLLM measurements it gives 5.2-6.3, 20-26, 6.0-7.4 and 22-27 s,
 * which Table 7 rounds up to 7, 27, 10 and 30 s; on another engine it gives that engine's.
 *
 * @example
 * measuredE2eThresholdsS([[{ maxQps: 5, latencyS: 8 }, { maxQps: 10, latencyS: 4 }], [{ maxQps: 0, latencyS: 0 }]]); // [6, undefined]
 */
export function measuredE2eThresholdsS(configs: readonly (readonly { maxQps: number; latencyS: number }[])[]): (number | undefined)[] {
  return configs.map((row) => {
    const served = row.filter((c) => c.maxQps > 0);
    return served.length > 0 ? served.reduce((sum, c) => sum + c.latencyS, 0) / served.length : undefined;
  });
}
