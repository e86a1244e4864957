/** Headers the edge sends a site's gateway with a request it routed there (all signed; see SIGNED_ROUTING_HEADERS). */
export const ROUTING_HEADERS = {
  class: "x-greenference-class",
  /** The plan instance the edge chose; the gateway hands the request to one of its replicas. */
  instance: "x-greenference-instance",
  /** The output length the edge predicts, for the gateway's least-laxity-first queue. */
  outputTokens: "x-greenference-output-tokens",
} as const;

/** Headers a site's gateway adds to the answers it passes through. */
export const GATEWAY_HEADERS = {
  replica: "x-greenference-replica",
  rerouted: "x-greenference-rerouted",
  reroutedWhy: "x-greenference-rerouted-reason",
  decodeRule: "x-greenference-ecoroute-rule",
  queueMs: "x-greenference-queue-ms",
  /** For a request to a decode pool: the prefill replica that prefilled it, or why its decode replica prefilled it itself. */
  prefill: "x-greenference-prefill",
} as const;
