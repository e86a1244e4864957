import type { Miniflare } from "miniflare";
import { median } from "../../src/core/stats/percentile.ts";
import { benchFleet, benchPlan, benchTelemetry, BENCH_MODEL, siteIds } from "./fleet-64.ts";
import { closedLoop, type LoadRun } from "./load.ts";
import { cpuMs, descendants } from "./process-cpu.ts";
import { passThroughWorker, routingWorker } from "./workers.ts";

export interface ThroughputOptions {
  requests: number;
  concurrency: number;
  /** Requests per Worker before measuring (JIT, connection pools, snapshot cache). */
  warmup: number;
  /** Rounds the measured requests are split into; each round runs both Workers back to back. */
  rounds: number;
  now: () => number;
}

/** One Worker's measured rounds, pooled. */
export interface WorkerRun extends LoadRun {
  /** CPU of the Worker's workerd process per request, in µs (null where /proc is not available). */
  cpuUsPerRequest: number | null;
}

export interface ThroughputResult {
  /** Median over rounds of routing rps / pass-through rps, each round's pair measured back to back. */
  ratio: number;
  /** Every round's ratio, in order. */
  roundRatios: number[];
  /** All routing requests over all pass-through requests per second (rounds pooled). */
  pooledRatio: number;
  routing: WorkerRun;
  passThrough: WorkerRun;
}

const ADMIN_TOKEN = "bench-admin-token";
export const CHAT_BODY = JSON.stringify({ model: BENCH_MODEL, messages: [{ role: "user", content: "Say hello to the bench, briefly." }], max_tokens: 32 });

/**
 * Requests per second through the routing Worker (64-site x 9-class plan, every site's ingress at
 * the local upstream) against a pass-through Worker to the same upstream, in one run. The
 * measured requests are split into rounds; in each round both Workers run back to back, in
 * alternating order (ABBA), so a burst of other work on the machine falls on one round's pair
 * rather than on one Worker, and the ratio is the median of the rounds' ratios. `track` is
 * handed every Miniflare started, so the caller can dispose of them whatever happens.
 */
export async function measureThroughput(main: string, upstream: string, options: ThroughputOptions, track: (mf: Miniflare) => void): Promise<ThroughputResult> {
  // One after the other, so each Worker's workerd process is known by the processes it added.
  const started = async (mf: Miniflare) => {
    track(mf);
    const before = new Set(descendants() ?? []);
    const url = await mf.ready;
    return { url, pids: descendants()?.filter((pid) => !before.has(pid)) ?? null };
  };
  const routing = await started(routingWorker(main, ADMIN_TOKEN));
  const pass = await started(passThroughWorker(upstream));
  await configure(routing.url, upstream);
  await untilRoutable(new URL("/v1/chat/completions", routing.url).href);

  const perRound = Math.ceil(options.requests / options.rounds);
  const loop = (base: URL, n: number) => closedLoop(new URL("/v1/chat/completions", base).href, CHAT_BODY, n, options.concurrency, options.now);
  for (const w of [routing, pass]) {
    const warm = await loop(w.url, options.warmup);
    if (warm.failures > 0) throw new Error(`warm-up through ${w.url.href} failed: ${warm.firstFailure}`);
  }
  const runs = { routing: [] as LoadRun[], pass: [] as LoadRun[] };
  const cpu = { routing: 0, pass: 0 };
  const measure = async (w: typeof routing, key: "routing" | "pass") => {
    const before = cpuMs(w.pids);
    runs[key].push(await loop(w.url, perRound));
    const after = cpuMs(w.pids);
    cpu[key] = before === null || after === null ? NaN : cpu[key] + after - before;
  };
  for (let round = 0; round < options.rounds; round++) {
    if (round % 2 === 0) {
      await measure(routing, "routing");
      await measure(pass, "pass");
    } else {
      await measure(pass, "pass");
      await measure(routing, "routing");
    }
  }
  const r = combine(runs.routing, cpu.routing);
  const p = combine(runs.pass, cpu.pass);
  const roundRatios = runs.routing.map((run, i) => run.rps / runs.pass[i]!.rps);
  return { ratio: median(roundRatios), roundRatios, pooledRatio: r.rps / p.rps, routing: r, passThrough: p };
}

/**
 * Waits (up to 20 s) until the Worker routes a request: sites turn healthy in the routing snapshot
 * a moment after their heartbeats (the snapshot is cached per isolate for about a second).
 */
async function untilRoutable(url: string): Promise<void> {
  let last = "";
  for (let i = 0; i < 100; i++) {
    const r = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: CHAT_BODY });
    await r.arrayBuffer();
    if (r.ok) return;
    last = `HTTP ${r.status}`;
    await new Promise((done) => setTimeout(done, 200));
  }
  throw new Error(`the routing Worker never routed a request (${last})`);
}

/** Fleet, plan, a token and a heartbeat per site, through the Worker's own admin and agent APIs. */
async function configure(base: URL, upstream: string): Promise<void> {
  const call = async (method: string, path: string, body: unknown, token = ADMIN_TOKEN) => {
    const r = await fetch(new URL(path, base), { method, headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify(body) });
    if (!r.ok) throw new Error(`${method} ${path}: HTTP ${r.status} ${await r.text()}`);
    return r.json() as Promise<Record<string, unknown>>;
  };
  await call("PUT", "/admin/v1/fleet", benchFleet(() => `${upstream}/`));
  await call("PUT", "/admin/v1/plan", benchPlan(1));
  for (const site of siteIds()) {
    const { token } = (await call("POST", `/admin/v1/sites/${site}/token`, {})) as { token: string };
    await call("POST", `/agent/v1/sites/${site}/heartbeat`, benchTelemetry(site, Date.now()), token);
  }
}

function combine(runs: LoadRun[], cpuMs: number): WorkerRun {
  const requests = runs.reduce((s, r) => s + r.requests, 0);
  const seconds = runs.reduce((s, r) => s + r.seconds, 0);
  const failures = runs.reduce((s, r) => s + r.failures, 0);
  const firstFailure = runs.find((r) => r.firstFailure)?.firstFailure;
  const cpuUsPerRequest = Number.isFinite(cpuMs) ? (cpuMs * 1000) / requests : null;
  return { requests, failures, seconds, rps: requests / seconds, cpuUsPerRequest, ...(firstFailure ? { firstFailure } : {}) };
}
