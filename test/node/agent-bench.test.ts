import { describe, expect, it } from "vitest";
import { agentBenchTable, type AgentBenchResult } from "../../bench/agent-bench.ts";
import { runEcoFreqDecisionBench } from "../../bench/agent/ecofreq-decisions.ts";
import { runNvmlCallBench } from "../../bench/agent/nvml-calls.ts";
import { runReceiptAccuracy } from "../../bench/agent/receipt-accuracy.ts";
import { runResponseTapBench } from "../../bench/agent/response-tap-events.ts";
import { runTelemetryCycleBench } from "../../bench/agent/telemetry-cycle.ts";

const hr = () => process.hrtime.bigint();

describe("agent bench pieces", () => {
  it("times one EcoFreq decision per iteration of a simulated engine, each decision counted once", () => {
    const out = runEcoFreqDecisionBench(hr, { requests: 400, rateRps: 16, warmup: 100, seed: 7 });
    expect(out.decisions).toBeGreaterThan(400);
    expect(out.per_freq.reduce((s, n) => s + n, 0)).toBe(out.decisions);
    expect(out.per_freq.every((n) => n > 0)).toBe(true);
    expect(out.decision_us.p50).toBeGreaterThan(0);
    expect(out.decision_us.p99).toBeGreaterThanOrEqual(out.decision_us.p50);
    expect(out.inputs).toMatchObject({ freqs_mhz: [1395, 1980], simulated: true });
  });

  it("times NVML calls through koffi into the fake library", async () => {
    const out = await runNvmlCallBench(hr, { calls: 200, warmup: 20 });
    expect(out.calls).toBe(200);
    expect(out.call_us.p50).toBeGreaterThan(0);
    expect(out.inputs.library).toMatch(/fake/);
  });

  it("times telemetry builds on a loaded simulated site and stops everything it started", async () => {
    const out = await runTelemetryCycleBench(() => performance.now(), { cycles: 5, spacingMs: 10, warmupMs: 1500, concurrency: 2, seed: 1 });
    expect(out.cycles).toBe(5);
    expect(out.inputs.engines).toBe(4);
    expect(out.requests_logged).toBeGreaterThan(0);
    expect(out.cycle_ms.p50).toBeGreaterThan(0);
  });

  it("times the gateway's reading of streamed tokens, every token seen", () => {
    const out = runResponseTapBench(hr, { streams: 20, eventsPerStream: 64, seed: 2 });
    expect(out.streams).toBe(20);
    expect(out.event_us.p50).toBeGreaterThan(0);
    expect(out.inputs.event_bytes).toBeGreaterThan(150);
  });

  it("measures receipts against the fake driver's truth: every answer measured, energy conserved, each request's share close to its own", async () => {
    const out = await runReceiptAccuracy({ warmup: 15, requests: 40, rps: 8, seed: 11, iterationMs: 10 });
    expect(out.measured).toBe(40);
    expect(out.total_ratio).toBeGreaterThan(0.97);
    expect(out.total_ratio).toBeLessThan(1.03);
    // The bench's goal is a mean of 0.05; this bound leaves room for a loaded CI machine's timer jitter.
    expect(out.mean_abs_rel_error).toBeLessThan(0.1);
  });

  it("prints a table that says whether the EcoFreq and receipt goals were met", () => {
    const stats = { p50: 0.2, p99: 0.9, mean: 0.3, max: 4 };
    const table = agentBenchTable({
      ecofreq_goal_met: false,
      receipt_goal_met: true,
      details: {
        ecofreq: { decision_us: stats, decisions: 10 },
        nvml: { call_us: stats },
        telemetry: { cycle_ms: stats, requests_logged: 3, inputs: { engines: 4, gpus: 8 } },
        tap: { event_us: stats, streams: 2, inputs: { events_per_stream: 8, event_bytes: 200 } },
        receipts: { mean_abs_rel_error: 0.03, p90_abs_rel_error: 0.07, measured: 100, requests: 100 },
        profile: { rows_per_minute: 20, rows: 8, stable_rows: 8, seconds: 24, inputs: { sim_speed: 4, grid: { requestsPerPoint: 12 } } },
      },
    } as unknown as AgentBenchResult);
    expect(table.split("\n")).toHaveLength(7);
    expect(table).toMatch(/goal p99 <= 500 us: NOT met/);
    expect(table).toMatch(/goal mean <= 0.05: met/);
  });
});
