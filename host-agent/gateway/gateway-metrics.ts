import type { PrometheusWriter } from "../util/prometheus-text.ts";
import type { IngressRefusal } from "./ingress-auth.ts";

/** Why the gateway answered a request itself instead of passing an engine's answer through. */
export type RejectReason = "invalid_request" | "instance_not_found" | "model_not_found" | "no_replica" | "queue_full" | "queue_timeout" | "upstream_failed" | "stopping" | "client_closed" | "busy" | "squashed" | "request_timeout" | "incomplete_body" | "unsupported_media_type";

/** The gateway's counters and gauges, read at scrape time. */
export interface GatewayMetrics {
  queueLength: number;
  /** Replica key (`<instance>#<replica>`) -> requests the gateway has in flight there. */
  inFlight: ReadonlyMap<string, number>;
  /** Instance -> requests dispatched to it. */
  dispatched: ReadonlyMap<string, number>;
  rejected: ReadonlyMap<RejectReason, number>;
  /** Instance named by the edge (or "unplanned" for one the site neither plans nor runs) -> requests sent to another instance instead. */
  rerouted: ReadonlyMap<string, number>;
  /** Requests refused at the door (not signed by the edge, stale, replayed...), by why. */
  unauthorized: ReadonlyMap<IngressRefusal, number>;
  retries: number;
  /** Responses cut because the engine failed after its head was sent. */
  broken: number;
  /** Summed time dispatched requests spent in the site queue, seconds. */
  queueWaitS: number;
  /** Requests for a decode pool prefilled on a prefill replica, those its decode replica served whole, and those whose prefill failed beside its decode (SGLang's). */
  prefillHandoffs: number;
  prefillWhole: number;
  prefillFailed: number;
}

/**
 * Appends the gateway's families to the agent's exposition, with conventional names:
 * `greenference_gateway_queue_length`, `..._dispatched_total{instance}`, `..._rejected_total{reason}`, ...
 *
 * @example
 * writeGatewayMetrics(new PrometheusWriter(), "wind-a", gateway.metrics()).text();
 */
export function writeGatewayMetrics(w: PrometheusWriter, site: string, m: GatewayMetrics): PrometheusWriter {
  const byInstance = (map: ReadonlyMap<string, number>) => [...map].map(([instance, n]) => [{ site, instance }, n] as const);
  return w
    .family("greenference_gateway_queue_length", "gauge", "Requests waiting in the site queue for a replica.", [[{ site }, m.queueLength]])
    .family("greenference_gateway_requests_in_flight", "gauge", "Requests the gateway has in flight at each engine replica.", [...m.inFlight].map(([key, n]) => [{ site, instance: key.replace(/#\d+$/, ""), replica: key.replace(/^.*#/, "") }, n] as const))
    .family("greenference_gateway_dispatched_total", "counter", "Requests the gateway dispatched to an engine replica, per instance (retries count again).", byInstance(m.dispatched))
    .family("greenference_gateway_rejected_total", "counter", "Requests the gateway answered with an error itself, by reason.", [...m.rejected].map(([reason, n]) => [{ site, reason }, n] as const))
    .family("greenference_gateway_rerouted_total", "counter", "Requests sent to another instance than the one the edge named, per named instance.", byInstance(m.rerouted))
    .family("greenference_gateway_unauthorized_total", "counter", "Requests refused because the edge's signature was missing, malformed, stale, wrong or replayed, by reason.", [...m.unauthorized].map(([reason, n]) => [{ site, reason }, n] as const))
    .family("greenference_gateway_retries_total", "counter", "Requests retried on another replica after one failed before answering.", [[{ site }, m.retries]])
    .family("greenference_gateway_broken_streams_total", "counter", "Responses cut because the engine failed after answering began.", [[{ site }, m.broken]])
    .family("greenference_gateway_queue_wait_seconds_total", "counter", "Time dispatched requests spent in the site queue.", [[{ site }, m.queueWaitS]])
    .family("greenference_gateway_prefill_handoffs_total", "counter", "Requests for a decode pool prefilled on a prefill replica, their KV handed to the decode replica.", [[{ site }, m.prefillHandoffs]])
    .family("greenference_gateway_prefill_whole_total", "counter", "Requests for a decode pool their decode replica served whole: no prefill replica free, or the prefill failed.", [[{ site }, m.prefillWhole]])
    .family("greenference_gateway_prefill_failed_total", "counter", "Requests whose prefill failed while their SGLang decode replica waited for the KV: the decode attempt is stopped (and retried where it can be).", [[{ site }, m.prefillFailed]]);
}
