import { writeGatewayMetrics, type GatewayMetrics } from "../gateway/gateway-metrics.ts";
import type { ControllersStatus } from "../controllers/local-controllers.ts";
import { PrometheusWriter, type HistogramSeries } from "../util/prometheus-text.ts";
import type { HeartbeatStats } from "./heartbeat-loop.ts";
import type { GpuReading, InstanceReading } from "./readings.ts";
import type { Histogram } from "../../src/core/stats/histogram.ts";
import type { RequestHistograms, ServedTotals } from "./request-log.ts";

/** Everything the agent's `/metrics` shows, read at scrape time. */
export interface AgentMetricsSnapshot {
  site: string;
  gpus: readonly GpuReading[];
  instances: readonly InstanceReading[];
  sitePowerW: number;
  appliedPlanVersion: number | null;
  desiredPlanVersion: number | null;
  /** The validity end of the plan the site runs or applies (null before the first), ms since the epoch. */
  planValidUntilMs: number | null;
  /** When the edge last answered a plan pull (null: not since start), ms since the epoch. */
  lastPlanPullMs: number | null;
  servedTotals: ReadonlyMap<string, ServedTotals>;
  /** Per instance, its finished requests' latencies and energy since the agent started. */
  requestHistograms?: ReadonlyMap<string, RequestHistograms>;
  heartbeats: HeartbeatStats;
  /** The site gateway's queue and counters, when the agent runs one. */
  gateway?: GatewayMetrics;
  /** The local clock controllers and the power ladder. */
  controllers?: ControllersStatus;
  /** FREESH's Jain fairness over the site's classes' output-length groups (NaN: too few requests, not shown). */
  fairness?: number;
}

const STATES = ["starting", "ready", "draining", "stopped", "failed"] as const;

/**
 * The agent's Prometheus exposition, with conventional names and units: `_watts`, `_joules_total`,
 * `_mhz`, `_ratio`. Labels: `site` everywhere, `gpu` for GPU series, `instance` for engine series.
 * Request latencies and energy are histograms named as vLLM names its own
 * (`greenference_time_to_first_token_seconds` beside `vllm:time_to_first_token_seconds`), so they
 * sum across replicas and sites; GPU power and energy are in DCGM's units (W, J).
 *
 * @example
 * agentMetricsText(snapshot); // "# HELP greenference_gpu_power_watts ...\ngreenference_gpu_power_watts{site=\"a\",gpu=\"0\"} 312\n..."
 */
export function agentMetricsText(s: AgentMetricsSnapshot): string {
  const site = s.site;
  const gpu = (g: GpuReading) => ({ site, gpu: g.index, type: g.type });
  const inst = (i: InstanceReading) => ({ site, instance: i.id });
  const totals = [...s.servedTotals];
  const histograms = [...(s.requestHistograms ?? [])];
  const series = (of: (h: RequestHistograms) => Histogram): HistogramSeries[] =>
    histograms.map(([instance, h]) => {
      const one = of(h);
      return { labels: { site, instance }, buckets: one.buckets(), sum: one.sum, count: one.count };
    });
  const w = new PrometheusWriter()
    .family("greenference_gpu_power_watts", "gauge", "Power the GPU draws now.", s.gpus.map((g) => [gpu(g), g.powerW]))
    .family("greenference_gpu_energy_joules_total", "counter", "Energy the GPU has used (driver counter).", s.gpus.map((g) => [gpu(g), g.energyJ]))
    .family("greenference_gpu_sm_clock_mhz", "gauge", "SM clock now.", s.gpus.map((g) => [gpu(g), g.smClockMhz]))
    .family("greenference_gpu_locked_clock_mhz", "gauge", "Upper end of the locked graphics clock range; absent when unlocked.", s.gpus.filter((g) => g.lockedClockMhz !== null).map((g) => [gpu(g), g.lockedClockMhz!]))
    .family("greenference_gpu_up", "gauge", "1 when the GPU answered its last reading.", s.gpus.map((g) => [gpu(g), g.health === "failed" ? 0 : 1]))
    .family("greenference_site_power_watts", "gauge", "Site power: metered, or GPU power x server overhead.", [[{ site }, s.sitePowerW]])
    .family("greenference_engine_requests_running", "gauge", "Requests the instance's engines run now.", s.instances.map((i) => [inst(i), i.running]))
    .family("greenference_engine_requests_waiting", "gauge", "Requests queued in the instance's engines.", s.instances.map((i) => [inst(i), i.waiting]))
    .family("greenference_gateway_requests_held", "gauge", "Requests for the instance the site gateway holds in its queue (replicas full, or the emergency ladder keeping the queue there).", s.instances.map((i) => [inst(i), i.held]))
    .family("greenference_engine_kv_cache_usage_ratio", "gauge", "Fraction of KV cache in use (mean over replicas).", s.instances.map((i) => [inst(i), i.kvUse]))
    .family("greenference_engine_replicas", "gauge", "Engine replicas of the instance.", s.instances.map((i) => [inst(i), i.replicas]))
    .family("greenference_engine_unresponsive_replicas", "gauge", "Replicas of the instance whose engine runs but does not answer its health checks (they get no new requests).", s.instances.map((i) => [inst(i), i.unresponsive]))
    .family("greenference_engine_unread_replicas", "gauge", "Replicas of the instance whose engine metrics could not be read for longer than the hold of their last good reading (10 s): their queues are unknown and left out of the instance's sums.", s.instances.map((i) => [inst(i), i.unread]))
    .family("greenference_engine_state", "gauge", "1 for the instance's current state.", s.instances.flatMap((i) => STATES.map((state) => [{ ...inst(i), state }, i.state === state ? 1 : 0] as const)))
    .histogram("greenference_time_to_first_token_seconds", "Time to first token of the instance's finished streamed requests, as clients saw it.", series((h) => h.ttftSeconds))
    .histogram("greenference_time_per_output_token_seconds", "Mean time per output token after the first, per finished streamed request.", series((h) => h.tpotSeconds))
    .histogram("greenference_e2e_request_latency_seconds", "Arrival to last byte of the instance's finished requests.", series((h) => h.e2eSeconds))
    .histogram("greenference_request_energy_joules", "Energy of each finished request with a receipt (measured or the engine's).", series((h) => h.energyJoules))
    .family("greenference_requests_total", "counter", "Requests the instance finished.", totals.map(([id, t]) => [{ site, instance: id }, t.requests]))
    .family("greenference_request_energy_joules_total", "counter", "Energy charged to finished requests (their receipts).", totals.map(([id, t]) => [{ site, instance: id }, t.energyJ]))
    .family("greenference_prompt_tokens_total", "counter", "Prompt tokens of finished requests.", totals.map(([id, t]) => [{ site, instance: id }, t.promptTokens]))
    .family("greenference_generation_tokens_total", "counter", "Output tokens of finished requests.", totals.map(([id, t]) => [{ site, instance: id }, t.completionTokens]))
    .family("greenference_heartbeats_total", "counter", "Heartbeats sent to the edge, by outcome.", [[{ site, outcome: "ok" }, s.heartbeats.sent], [{ site, outcome: "failed" }, s.heartbeats.failed]]);
  if (s.appliedPlanVersion !== null) w.family("greenference_plan_applied_version", "gauge", "Version of the plan the site runs.", [[{ site }, s.appliedPlanVersion]]);
  if (s.desiredPlanVersion !== null) w.family("greenference_plan_desired_version", "gauge", "Version of the plan the site is applying or runs.", [[{ site }, s.desiredPlanVersion]]);
  if (s.planValidUntilMs !== null) w.family("greenference_plan_valid_until_timestamp_seconds", "gauge", "End of the validity of the plan the site runs; past it, no newer plan has come and the site keeps running this one.", [[{ site }, s.planValidUntilMs / 1000]]);
  if (s.lastPlanPullMs !== null) w.family("greenference_plan_last_pull_timestamp_seconds", "gauge", "When the edge last answered a plan pull.", [[{ site }, s.lastPlanPullMs / 1000]]);
  if (s.fairness !== undefined && Number.isFinite(s.fairness)) w.family("greenference_jain_fairness_ratio", "gauge", "Jain's fairness over each class's output-length quartiles of the tokens that reached their clients within 1.4 x their isolated latency, requests of the telemetry window (FREESH Eq. 9), weighted by class.", [[{ site }, s.fairness]]);
  if (s.gateway) writeGatewayMetrics(w, site, s.gateway);
  if (s.controllers) {
    const { powerLadder, controllers } = s.controllers;
    w.family("greenference_power_ladder_level", "gauge", "Rung of the site power ladder: 0 none, 1 min-clock, 2 power-limit.", [[{ site, step: powerLadder.step }, powerLadder.level]]);
    if (powerLadder.capW !== null) w.family("greenference_site_power_cap_watts", "gauge", "The plan's site power cap.", [[{ site }, powerLadder.capW]]);
    w.family("greenference_controller_clock_mhz", "gauge", "Clock a local controller last set (gpu: the first GPU it controls).", controllers.filter((c) => c.mhz !== null).map((c) => [{ site, instance: c.instance, policy: c.policy, gpu: c.gpus[0]! }, c.mhz!]));
    w.family("greenference_emergency_step", "gauge", "1 for the rung of DynamoLLM's emergency ladder the instance manager last took (none, reorder, max-clock, re-steer, squash).", controllers.filter((c) => c.emergency !== undefined).map((c) => [{ site, instance: c.instance, step: c.emergency! }, 1]));
    w.family("greenference_controller_unstarted", "gauge", "1 for a planned clock controller that could not start (its GPUs stay at the plan's bounds), with the reason.", s.controllers.unstarted.map((c) => [{ site, instance: c.instance, policy: c.policy, reason: c.reason }, 1]));
  }
  return w.text();
}
