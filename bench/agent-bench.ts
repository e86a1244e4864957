import { runEcoFreqDecisionBench, type EcoFreqDecisionBench } from "./agent/ecofreq-decisions.ts";
import { runNvmlCallBench, type NvmlCallBench } from "./agent/nvml-calls.ts";
import type { Percentiles } from "./agent/percentiles.ts";
import { runProfileRowsBench, type ProfileRowsBench } from "./agent/profile-rows.ts";
import { runReceiptAccuracy, type ReceiptAccuracy } from "./agent/receipt-accuracy.ts";
import { runResponseTapBench, type ResponseTapBench } from "./agent/response-tap-events.ts";
import { runTelemetryCycleBench, type TelemetryCycleBench } from "./agent/telemetry-cycle.ts";

/** GreenServe budgets about 0.5 ms for one EcoFreq choice. */
export const ECOFREQ_DECISION_GOAL_US = 500;
/** Measured receipts should be within 5% of each request's true energy on average. */
export const RECEIPT_ERROR_GOAL = 0.05;

export interface AgentBenchResult {
  ecofreq_decision_us: Percentiles;
  /** Mean of one awaited NVML call through koffi, into the fake library. */
  nvml_ffi_call_us: number;
  /** Median of one `Agent.telemetry()` on a loaded simulated site. */
  telemetry_cycle_ms: number;
  /** Median cost the site gateway adds to one streamed token (reading it for TTFT/TBT and usage). */
  gateway_tap_event_us: number;
  /** Mean |measured - true| / true of per-request energy receipts under mixed load (fake NVML's truth). */
  receipt_error: number;
  /** Rows the agent profiler measures per wall minute against the simulated engine (simulated GPUs at 4x real time). */
  profile_rows_per_minute: number;
  ecofreq_goal_met: boolean;
  receipt_goal_met: boolean;
  nvml: "fake";
  simulated: true;
  details: { ecofreq: EcoFreqDecisionBench; nvml: NvmlCallBench; telemetry: TelemetryCycleBench; tap: ResponseTapBench; receipts: ReceiptAccuracy; profile: ProfileRowsBench };
}

/**
 * The host agent's benchmark: (a) one EcoFreq decision, per iteration, on queue/batch states of a
 * busy simulated engine (goal: p99 <= 500 us); (b) one NVML call over FFI into the fake NVML
 * library the tests compile (NVML here is not a real driver); (c) one telemetry build on a
 * simulated 8-GPU site with 4 engines under load; (d) the site gateway's reading of one streamed
 * token (`ResponseTap`); (e) the error of measured energy receipts against each request's true
 * energy, a fake vLLM charging the fake NVML counter under mixed Poisson load (goal: <= 0.05);
 * (f) the agent profiler's rows per minute against the simulated engine.
 *
 * @example
 * const r = await runAgentBench(); // r.ecofreq_decision_us.p99 <= 500 when the goal is met
 */
export async function runAgentBench(): Promise<AgentBenchResult> {
  const hr = () => process.hrtime.bigint();
  const ecofreq = runEcoFreqDecisionBench(hr);
  const nvml = await runNvmlCallBench(hr);
  const telemetry = await runTelemetryCycleBench(() => performance.now());
  const tap = runResponseTapBench(hr);
  const receipts = await runReceiptAccuracy({ warmup: 20, requests: 100, rps: 8, seed: 5, iterationMs: 10 });
  const profile = await runProfileRowsBench();
  return {
    ecofreq_decision_us: { p50: ecofreq.decision_us.p50, p99: ecofreq.decision_us.p99 },
    nvml_ffi_call_us: nvml.call_us.mean,
    telemetry_cycle_ms: telemetry.cycle_ms.p50,
    gateway_tap_event_us: tap.event_us.p50,
    receipt_error: receipts.mean_abs_rel_error,
    profile_rows_per_minute: profile.rows_per_minute,
    ecofreq_goal_met: ecofreq.decision_us.p99 <= ECOFREQ_DECISION_GOAL_US,
    receipt_goal_met: receipts.mean_abs_rel_error <= RECEIPT_ERROR_GOAL,
    nvml: "fake",
    simulated: true,
    details: { ecofreq, nvml, telemetry, tap, receipts, profile },
  };
}

/**
 * A short table of the figures, for people.
 *
 * @example
 * console.log(agentBenchTable(await runAgentBench()));
 */
export function agentBenchTable(r: AgentBenchResult): string {
  const { ecofreq, nvml, telemetry, tap, receipts, profile } = r.details;
  const rows: [string, string, string, string][] = [
    ["ecofreq decision (us)", String(ecofreq.decision_us.p50), String(ecofreq.decision_us.p99), `${ecofreq.decisions} decisions; goal p99 <= ${ECOFREQ_DECISION_GOAL_US} us: ${r.ecofreq_goal_met ? "met" : "NOT met"}`],
    ["nvml ffi call (us)", String(nvml.call_us.p50), String(nvml.call_us.p99), `mean ${nvml.call_us.mean}; fake NVML library, not a driver`],
    ["telemetry cycle (ms)", String(telemetry.cycle_ms.p50), String(telemetry.cycle_ms.p99), `${telemetry.inputs.engines} engines on ${telemetry.inputs.gpus} simulated GPUs, ${telemetry.requests_logged} requests logged`],
    ["gateway tap per token (us)", String(tap.event_us.p50), String(tap.event_us.p99), `${tap.streams} streams of ${tap.inputs.events_per_stream} SSE events, ${tap.inputs.event_bytes} bytes each`],
    ["receipt error (|rel|)", String(receipts.mean_abs_rel_error), String(receipts.p90_abs_rel_error), `mean and p90 over ${receipts.measured}/${receipts.requests} measured receipts vs the fake driver's truth; goal mean <= ${RECEIPT_ERROR_GOAL}: ${r.receipt_goal_met ? "met" : "NOT met"}`],
    ["profile rows per minute", String(profile.rows_per_minute), "", `${profile.rows} rows (${profile.stable_rows} stable) in ${profile.seconds} s; simulated engine and GPUs at ${profile.inputs.sim_speed}x real time, ${profile.inputs.grid.requestsPerPoint} requests per point`],
  ];
  const head: [string, string, string, string] = ["", "p50", "p99", "(receipt error: mean, p90)"];
  const widths = [0, 1, 2].map((c) => Math.max(...[head, ...rows].map((row) => row[c]!.length)));
  return [head, ...rows].map((row) => row.map((cell, c) => (c < 3 ? cell.padEnd(widths[c]!) : cell)).join("  ")).join("\n");
}
