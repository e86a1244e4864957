/** Requests a site gateway sends one engine replica at once by default (the agent's `gatewayReplicaConcurrency`); more wait in the site queue. */
export const DEFAULT_REPLICA_CONCURRENCY = 64;

/** z of the 99th percentile of a normal distribution. */
const Z99 = 2.326;

/**
 * Whether a replica serving `loadRps` whose requests live `lifetimeS` each (arrival to last token)
 * keeps its requests in flight within `concurrency` 99% of the time. With Poisson arrivals the
 * number in flight is Poisson with mean load x lifetime (Little's law; M/G/infinity), read here
 * through its normal approximation. Beyond it, requests wait in the site queue for a free slot,
 * and that wait lands on their TTFT, which a profile point measured without a gateway never shows.
 *
 * @example
 * withinConcurrency(2.35, 20, 64); // true: 47 in flight on average, 63 at the 99th percentile
 * withinConcurrency(3.11, 20, 64); // false: 62 on average
 */
export function withinConcurrency(loadRps: number, lifetimeS: number, concurrency: number): boolean {
  const mean = loadRps * lifetimeS;
  return mean + Z99 * Math.sqrt(mean) <= concurrency;
}
