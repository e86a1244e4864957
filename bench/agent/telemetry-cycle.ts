import { Agent } from "../../host-agent/agent/agent.ts";
import { loadAgentConfig } from "../../host-agent/config/load-agent-config.ts";
import { seededRng } from "../../src/core/ports/rng.ts";
import { percentiles, type Percentiles } from "./percentiles.ts";

export interface TelemetryCycleBench {
  cycle_ms: Percentiles & { mean: number };
  cycles: number;
  requests_logged: number;
  inputs: { gpus: number; gpu_type: string; instances: number; engines: number; concurrency_per_engine: number; warmup_ms: number; spacing_ms: number; sim_speed: number; seed: number; simulated: true };
}

const GPUS = 8;
const CLASSES = ["SS", "SM", "SL", "MS", "MM", "ML", "LS", "LM", "LL"];
const CLOCKS = [
  { mode: "policy", policy: "ecofreq", minMhz: 1005, maxMhz: 1980 },
  { mode: "policy", policy: "ecofreq", minMhz: 1005, maxMhz: 1590 },
  { mode: "locked", mhz: 1410 },
  { mode: "policy", policy: "miad", minMhz: 1005, maxMhz: 1980 },
];

/**
 * One telemetry build of the agent (`Agent.telemetry()`: every GPU's power, energy and clocks,
 * every engine's metrics, the request log's per-instance served load and latency percentiles,
 * schema validation) on a simulated site of 8 H100s running 4 TP2 engines under steady load from
 * in-process clients over loopback. The engines and clients share the agent's event loop, as
 * simulated engines do in the agent, so a cycle includes waiting for their turns. The edge URL
 * points at a closed loopback port: registration and heartbeats fail quietly and take no part.
 *
 * @example
 * (await runTelemetryCycleBench(() => performance.now())).cycle_ms.p50; // ~0.7 ms
 */
export async function runTelemetryCycleBench(now: () => number, o = { cycles: 100, spacingMs: 20, warmupMs: 3_000, concurrency: 12, seed: 11 }): Promise<TelemetryCycleBench> {
  // Default heartbeat (its 15 s window is what telemetry reads); plan pulls and retries slowed down, as the edge is absent.
  const slow = "3600000";
  const config = loadAgentConfig({ flags: { site: "bench", edge: "http://127.0.0.1:9", token: "gfs_bench_00", gpu: "sim", engine: "sim", simGpus: String(GPUS), simSpeed: "1", planPollMs: slow, retryBaseMs: slow, retryMaxMs: slow } });
  const agent = await Agent.start(config, { log: () => undefined });
  let loading = true;
  const clients: Promise<void>[] = [];
  try {
    const instances = CLOCKS.map((clock, i) => ({ id: `i${i}`, model: "llama3.1-8b", variant: "base", tp: 2, replicas: 1, gpus: [2 * i, 2 * i + 1], role: "mixed", clock, loadRps: {} }));
    const offered = agent.applier.offer({ version: 1, policy: "greenference", createdAtMs: 1_700_000_000_000, validUntilMs: 1_800_000_000_000, site: { site: "bench", powerCapW: 1e6, instances }, routing: {} }, "local");
    if (!offered.accepted) throw new Error(`the bench plan was refused: ${offered.problems.join("; ")}`);
    for (let t = now(); agent.applier.status().appliedVersion !== 1; ) {
      if (now() - t > 30_000) throw new Error(`the bench plan was not applied within 30 s: ${agent.applier.status().lastError}`);
      await sleep(20);
    }
    const rng = seededRng(o.seed);
    for (const engine of agent.applier.engines.values()) {
      for (let c = 0; c < o.concurrency; c++) {
        const body = JSON.stringify({ model: "llama3.1-8b", prompt: Array.from({ length: 100 + Math.floor(rng.next() * 900) }, () => 1000), max_tokens: 16 + Math.floor(rng.next() * 112) });
        const headers = { "x-greenference-class": CLASSES[Math.floor(rng.next() * CLASSES.length)]! };
        clients.push((async () => {
          while (loading) await fetch(`${engine.url}/v1/completions`, { method: "POST", headers, body }).then((r) => r.text()).catch(() => undefined);
        })());
      }
    }
    await sleep(o.warmupMs);
    const times: number[] = [];
    for (let i = 0; i < o.cycles; i++) {
      const t0 = now();
      await agent.telemetry();
      times.push(now() - t0);
      await sleep(o.spacingMs);
    }
    const requests = [...agent.requestLog.totals().values()].reduce((s, t) => s + t.requests, 0);
    return {
      cycle_ms: { ...percentiles(times), mean: Math.round((times.reduce((s, t) => s + t, 0) / times.length) * 1000) / 1000 },
      cycles: o.cycles,
      requests_logged: requests,
      inputs: { gpus: GPUS, gpu_type: config.simGpuType, instances: instances.length, engines: agent.applier.engines.size, concurrency_per_engine: o.concurrency, warmup_ms: o.warmupMs, spacing_ms: o.spacingMs, sim_speed: 1, seed: o.seed, simulated: true },
    };
  } finally {
    loading = false;
    await agent.stop();
    await Promise.all(clients);
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
