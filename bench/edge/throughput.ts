import type { Miniflare } from "miniflare";
import { benchFleet, benchPlan, benchTelemetry, BENCH_MODEL, siteIds } from "./fleet-64.ts";
import { closedLoop, type LoadRun } from "./load.ts";
import { passThroughWorker, routingWorker } from "./workers.ts";

export interface ThroughputOptions {
  requests: number;
  concurrency: number;
  /** Requests per Worker before measuring (JIT, connection pools, snapshot cache). */
  warmup: number;
  /** Alternating rounds the measured requests are split into, so drift on the machine hits both Workers. */
  rounds: number;
  now: () => number;
}

export interface ThroughputResult {
  ratio: number;
  routing: LoadRun;
  passThrough: LoadRun;
}

const ADMIN_TOKEN = "bench-admin-token";
export const CHAT_BODY = JSON.stringify({ model: BENCH_MODEL, messages: [{ role: "user", content: "Say hello to the bench, briefly." }], max_tokens: 32 });

/**
 * Requests per second through the routing Worker (64-site x 9-class plan, every site's ingress at
 * the local upstream) against a pass-through Worker to the same upstream, in one run. Each
 * Worker's requests are split into alternating rounds so drift on the machine hits both.
 * `track` is handed every Miniflare started, so the caller can dispose of them whatever happens.
 */
export async function measureThroughput(main: string, upstream: string, options: ThroughputOptions, track: (mf: Miniflare) => void): Promise<ThroughputResult> {
  const routing = routingWorker(main, ADMIN_TOKEN);
  track(routing);
  const pass = passThroughWorker(upstream);
  track(pass);
  const [routingUrl, passUrl] = await Promise.all([routing.ready, pass.ready]);
  await configure(routingUrl, upstream);
  await untilRoutable(new URL("/v1/chat/completions", routingUrl).href);

  const target = (base: URL) => new URL("/v1/chat/completions", base).href;
  const perRound = Math.ceil(options.requests / options.rounds);
  const loop = (base: URL, n: number) => closedLoop(target(base), CHAT_BODY, n, options.concurrency, options.now);
  for (const base of [routingUrl, passUrl]) {
    const warm = await loop(base, options.warmup);
    if (warm.failures > 0) throw new Error(`warm-up through ${base.href} failed: ${warm.firstFailure}`);
  }
  const runs = { routing: [] as LoadRun[], pass: [] as LoadRun[] };
  for (let round = 0; round < options.rounds; round++) {
    runs.routing.push(await loop(routingUrl, perRound));
    runs.pass.push(await loop(passUrl, perRound));
  }
  const r = combine(runs.routing);
  const p = combine(runs.pass);
  return { ratio: r.rps / p.rps, routing: r, passThrough: p };
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

function combine(runs: LoadRun[]): LoadRun {
  const requests = runs.reduce((s, r) => s + r.requests, 0);
  const seconds = runs.reduce((s, r) => s + r.seconds, 0);
  const failures = runs.reduce((s, r) => s + r.failures, 0);
  const firstFailure = runs.find((r) => r.firstFailure)?.firstFailure;
  return { requests, failures, seconds, rps: requests / seconds, ...(firstFailure ? { firstFailure } : {}) };
}
