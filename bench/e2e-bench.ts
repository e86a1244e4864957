import { LocalStack } from "../cli/stack/local-stack.ts";
import { chatCompletionRequest } from "../cli/stack/openai-request.ts";
import { isLost } from "../cli/stack/request-outcome.ts";
import { StackConfig } from "../cli/stack/stack-config.ts";
import { linearPercentile, sortedAscending } from "../src/core/stats/percentile.ts";
import { setWeightedPlan, waitFor } from "../cli/stack/weighted-plan.ts";
import { signSiteHop } from "../host-agent/gateway/ingress-auth.ts";

export interface E2eBenchOptions {
  dataDir: string;
  /** Paired requests (edge, then the same site directly) for the edge hop's added latency. */
  latencyPairs?: number;
  /** Seconds of load before the agent is killed, and after. */
  beforeKillS?: number;
  afterKillS?: number;
  loadRps?: number;
  /** Leave wrangler dev's DevTools network capture on (see cli/stack/devtools-network.ts). */
  devtoolsNetworkCapture?: boolean;
  log?: (line: string) => void;
}

const VICTIM = "wind-erco";

/**
 * The local stack under load with one agent killed mid-run (SIGKILL of its process group):
 * counts what was served, lost (no answer, or an error without a reason), cut mid-stream and
 * retried; how long until routing left the dead site; and the latency the edge hop adds, from
 * paired requests sent through the edge and then straight to the site's ingress it chose.
 */
export async function runE2eBench(o: E2eBenchOptions) {
  const log = o.log ?? (() => {});
  const config = StackConfig.parse({
    dataDir: o.dataDir,
    edgePort: 0,
    engineSpeed: 10,
    maxOutputTokens: 64,
    loadRps: o.loadRps ?? 8,
    devtoolsNetworkCapture: o.devtoolsNetworkCapture ?? false,
    sites: [
      { kind: "wind", id: "wind-bpat", region: "BPAT", gpus: 4 },
      { kind: "wind", id: VICTIM, region: "ERCO", gpus: 4 },
      { kind: "grid", id: "grid-ciso", region: "CISO", gpus: 4 },
    ],
  });
  const stack = await LocalStack.start({ config, load: false, autopilot: false, log: (l) => (l.startsWith("[") ? undefined : log(l)) });
  try {
    await setWeightedPlan(stack, { "wind-bpat": 1, [VICTIM]: 1, "grid-ciso": 1 });
    log("measuring the edge hop's added latency");
    const added = await addedLatencyMs(stack, o.latencyPairs ?? 200);

    log("load with one agent killed mid-run");
    const load = stack.load!;
    load.start();
    await sleep((o.beforeKillS ?? 8) * 1000);
    const killedAt = Date.now();
    stack.sites.find((s) => s.site.id === VICTIM)!.process!.killNow();
    await waitFor(async () => (await stack.admin<{ site: string; health: { healthy: boolean } }[]>("GET", "/admin/v1/sites")).some((s) => s.site === VICTIM && !s.health.healthy), 30_000, `${VICTIM} marked unhealthy`);
    const unhealthyAfterS = (Date.now() - killedAt) / 1000;
    await sleep((o.afterKillS ?? 12) * 1000);
    await load.stop();

    const outcomes = load.outcomes;
    const atDeadSiteAfterKill = outcomes.filter((r) => r.startedMs >= killedAt && (r.attempts > 1 || r.site === VICTIM));
    const lastTouchS = Math.max(0, ...atDeadSiteAfterKill.map((r) => (r.startedMs - killedAt) / 1000));
    const cut = outcomes.filter((r) => !r.ok && r.status === 200);
    return {
      simulated_gpus: true,
      requests: outcomes.length,
      served: outcomes.filter((r) => r.ok).length,
      lost: outcomes.filter(isLost).length,
      cut_mid_stream: cut.length,
      errors_with_reason: outcomes.filter((r) => !r.ok && r.status >= 400).length,
      retried: outcomes.filter((r) => r.attempts > 1).length,
      recovery_s: round(Math.max(unhealthyAfterS, lastTouchS), 2),
      unhealthy_after_s: round(unhealthyAfterS, 2),
      added_latency_ms: added,
      inputs: { sites: config.sites.map((s) => s.id), killed: VICTIM, load_rps: config.loadRps, before_kill_s: o.beforeKillS ?? 8, after_kill_s: o.afterKillS ?? 12, engine_speed: config.engineSpeed, heartbeat_timeout_s: 5, agent_heartbeat_ms: 1000, latency_pairs: o.latencyPairs ?? 200, devtools_network_capture: config.devtoolsNetworkCapture },
    };
  } finally {
    await stack.stop();
  }
}

async function addedLatencyMs(stack: LocalStack, pairs: number) {
  const diffs: number[] = [];
  const request = chatCompletionRequest({ model: stack.config.model, inputTokens: 20, maxTokens: 1, stream: false });
  for (let i = 0; i < pairs + 10; i++) {
    const t0 = performance.now();
    const viaEdge = await fetch(`${stack.edgeUrl}/v1/chat/completions`, request);
    await viaEdge.text();
    const edgeMs = performance.now() - t0;
    const site = stack.sites.find((s) => s.site.id === viaEdge.headers.get("x-greenference-site"))!;
    const routing = { ...request.headers, "x-greenference-instance": viaEdge.headers.get("x-greenference-instance")!, "x-greenference-class": viaEdge.headers.get("x-greenference-class")! };
    const t1 = performance.now();
    // Signed as the edge signs: the ingress serves nothing else, and the signature's check is part of the site's cost.
    const headers = { ...routing, ...signSiteHop(stack.ingressSecret(site.site.id), "POST", "/v1/chat/completions", routing, request.body) };
    const direct = await fetch(`${site.ingressUrl}/v1/chat/completions`, { ...request, headers });
    await direct.text();
    const directMs = performance.now() - t1;
    if (viaEdge.status !== 200 || direct.status !== 200) throw new Error(`latency probe failed: edge ${viaEdge.status}, direct ${direct.status}`);
    if (i >= 10) diffs.push(edgeMs - directMs); // the first ten warm connections and caches up
  }
  const sorted = sortedAscending(diffs);
  return { p50: round(linearPercentile(sorted, 50), 2), p99: round(linearPercentile(sorted, 99), 2) };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const round = (x: number, digits: number) => Math.round(x * 10 ** digits) / 10 ** digits;
