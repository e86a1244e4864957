import { LocalStack } from "../lib/stack/local-stack.ts";
import { chatCompletionRequest } from "../lib/stack/openai-request.ts";
import { summariseOutcomes } from "../lib/stack/outcome-summary.ts";
import { isLost } from "../lib/stack/request-outcome.ts";
import { smallStackConfig } from "../lib/stack/stack-config.ts";
import { waitFor } from "../lib/stack/weighted-plan.ts";
import { POLICIES } from "../src/core/policies/registry.ts";
import type { PolicyKind } from "../src/core/schemas/fleet.ts";
import type { Plan } from "../src/core/schemas/plan.ts";
import { linearPercentile, sortedAscending } from "../src/core/stats/percentile.ts";
import { signSiteHop } from "../host-agent/gateway/ingress-auth.ts";
import { planShapes } from "./e2e/applied-shapes.ts";
import { parsePrometheusText, sumOf } from "../host-agent/util/prometheus-text.ts";

export interface E2eBenchOptions {
  dataDir: string;
  /** The fleet policy the stack runs (default the combined one). */
  policy?: PolicyKind;
  /** Paired requests (edge, then the same site directly) for the edge hop's added latency. */
  latencyPairs?: number;
  /** Seconds of load before the agent is killed, and after. */
  beforeKillS?: number;
  afterKillS?: number;
  loadRps?: number;
  /** Leave wrangler dev's DevTools network capture on (see lib/stack/devtools-network.ts). */
  devtoolsNetworkCapture?: boolean;
  log?: (line: string) => void;
}

const VICTIM = "wind-erco";
/** The site whose power drops mid-slot (no re-plan: Planner-S corrects, where the policy has one). */
const DROPPED = "wind-bpat";
/** Share of its envelope the dropped site keeps. */
const DROP_TO = 0.4;
/** Longest the bench waits, load running, for the cron's second plan and a correction. */
const PLANS_DEADLINE_MS = 120_000;

/**
 * The local stack on a fleet policy, under load, with a site's power dropped mid-slot and one
 * agent killed mid-run (SIGKILL of its process group). The policy plans live: the cron (on the
 * stack's sped-up clock) makes every plan, Planner-S corrects in ControlDO's alarm where the
 * policy has a corrector. Reports the plans and corrections made, what the plans the agents
 * applied held (`planShapes`), what was served, lost (no answer, or an error without a reason),
 * cut mid-stream and retried; how long until routing left the dead site; and the latency the edge
 * hop adds, from paired requests sent through the edge and then straight to the site's ingress it
 * chose.
 */
export async function runE2eBench(o: E2eBenchOptions) {
  const log = o.log ?? (() => {});
  const policy = o.policy ?? "greenference";
  const config = smallStackConfig({
    policy,
    // A small model, so sites of 4 GPUs hold several instances; MIG policies keep their own family.
    ...(POLICIES[policy].usesMig ? {} : { model: "llama3.1-8b", tps: [1, 2] }),
    dataDir: o.dataDir,
    maxOutputTokens: 64,
    loadRps: o.loadRps ?? 8,
    devtoolsNetworkCapture: o.devtoolsNetworkCapture ?? false,
  });
  const stack = await LocalStack.start({ config, load: false, log: (l) => (l.startsWith("[") ? undefined : log(l)) });
  const applied = new AppliedVersions(stack);
  try {
    log("measuring the edge hop's added latency");
    const added = await addedLatencyMs(stack, o.latencyPairs ?? 200);

    log(`load with ${DROPPED}'s power dropped mid-slot and ${VICTIM}'s agent killed`);
    const load = stack.load!;
    load.start();
    const beforeKillMs = (o.beforeKillS ?? 8) * 1000;
    await sleep(beforeKillMs / 2);
    await stack.setPowerOverride(DROPPED, DROP_TO * stack.envelopeW(stack.sites.find((s) => s.site.id === DROPPED)!.site, Date.now()), { replan: false });
    await sleep(beforeKillMs / 2);
    const killedAt = Date.now();
    stack.sites.find((s) => s.site.id === VICTIM)!.process!.killNow();
    await waitFor(async () => (await stack.admin<{ site: string; health: { healthy: boolean } }[]>("GET", "/admin/v1/sites")).some((s) => s.site === VICTIM && !s.health.healthy), 30_000, `${VICTIM} marked unhealthy`);
    const unhealthyAfterS = (Date.now() - killedAt) / 1000;
    await sleep((o.afterKillS ?? 12) * 1000);
    const corrects = POLICIES[policy].corrector !== null;
    await waitFor(async () => {
      const h = await history(stack);
      return h.plans.length >= 2 && (!corrects || h.corrections.length >= 1);
    }, PLANS_DEADLINE_MS, `two plans from the cron${corrects ? " and a Planner-S correction" : ""}`).catch((error: unknown) => log(String(error)));
    await load.stop();
    await applied.stop();
    const handoffs = await gatewayCounters(stack, VICTIM);

    const outcomes = load.outcomes;
    const atDeadSiteAfterKill = outcomes.filter((r) => r.startedMs >= killedAt && (r.attempts > 1 || r.site === VICTIM));
    const lastTouchS = Math.max(0, ...atDeadSiteAfterKill.map((r) => (r.startedMs - killedAt) / 1000));
    const cut = outcomes.filter((r) => !r.ok && r.status === 200);
    const h = await history(stack);
    const plans = await Promise.all([...applied.versions].map((v) => stack.admin<Plan>("GET", `/admin/v1/plans/${v}`).catch(() => null)));
    return {
      policy,
      plans: h.plans.length,
      plan_deltas: h.corrections.length,
      requests: outcomes.length,
      served: outcomes.filter((r) => r.ok).length,
      lost: outcomes.filter(isLost).length,
      recovery_s: round(Math.max(unhealthyAfterS, lastTouchS), 2),
      shapes: planShapes(plans.filter((p): p is Plan => p !== null)),
      applied_versions: [...applied.versions].sort((a, b) => a - b),
      simulated_gpus: true,
      cut_mid_stream: cut.length,
      errors_with_reason: outcomes.filter((r) => !r.ok && r.status >= 400).length,
      errors_by_reason: summariseOutcomes(outcomes).errorsByReason,
      retried: outcomes.filter((r) => r.attempts > 1).length,
      prefill_handoffs: handoffs.handoffs,
      prefill_whole: handoffs.whole,
      prefill_failed: handoffs.failed,
      unhealthy_after_s: round(unhealthyAfterS, 2),
      added_latency_ms: added,
      inputs: { sites: config.sites.map((s) => s.id), gpu_type: config.gpuType, model: config.model, variants: config.variants, killed: VICTIM, power_dropped: { site: DROPPED, to_share: DROP_TO }, load_rps: config.loadRps, before_kill_s: o.beforeKillS ?? 8, after_kill_s: o.afterKillS ?? 12, engine_speed: config.engineSpeed, series_speed: config.speed, heartbeat_timeout_s: 5, agent_heartbeat_ms: 1000, latency_pairs: o.latencyPairs ?? 200, devtools_network_capture: config.devtoolsNetworkCapture },
    };
  } finally {
    await applied.stop();
    await stack.stop();
  }
}

/**
 * Requests for decode pools the live sites' gateways prefilled on a prefill replica, those their
 * decode replica served whole, and those whose prefill failed beside an SGLang-style decode (the
 * killed site's counts died with it).
 */
async function gatewayCounters(stack: LocalStack, killed: string): Promise<{ handoffs: number; whole: number; failed: number }> {
  let [handoffs, whole, failed] = [0, 0, 0];
  for (const site of stack.sites.filter((s) => s.site.id !== killed)) {
    const text = await fetch(`${site.localApiUrl}/metrics`, { headers: { authorization: `Bearer ${site.readToken}` } })
      .then((r) => r.text())
      .catch(() => "");
    const samples = parsePrometheusText(text);
    handoffs += sumOf(samples, "greenference_gateway_prefill_handoffs_total") ?? 0;
    whole += sumOf(samples, "greenference_gateway_prefill_whole_total") ?? 0;
    failed += sumOf(samples, "greenference_gateway_prefill_failed_total") ?? 0;
  }
  return { handoffs, whole, failed };
}

/** Plans made (every one in the bench's stack comes from the cron) and Planner-S corrections. */
async function history(stack: LocalStack): Promise<{ plans: unknown[]; corrections: unknown[] }> {
  return stack.admin("GET", "/admin/v1/history");
}

/** The plan versions the sites' agents reported applied, polled every 500 ms while the bench runs. */
class AppliedVersions {
  readonly versions = new Set<number>();
  private running = true;
  private readonly loop: Promise<void>;

  constructor(private readonly stack: LocalStack) {
    this.loop = this.poll();
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }

  private async poll(): Promise<void> {
    while (this.running) {
      const sites = await this.stack.admin<{ health: { appliedPlanVersion: number | null } }[]>("GET", "/admin/v1/sites").catch(() => []);
      for (const s of sites) if (s.health.appliedPlanVersion !== null) this.versions.add(s.health.appliedPlanVersion);
      await sleep(500);
    }
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
    if (viaEdge.status !== 200) throw new Error(`latency probe through the edge failed: ${viaEdge.status}`);
    const site = stack.sites.find((s) => s.site.id === viaEdge.headers.get("x-greenference-site"))!;
    const routing = { ...request.headers, "x-greenference-instance": viaEdge.headers.get("x-greenference-instance")!, "x-greenference-class": viaEdge.headers.get("x-greenference-class")! };
    const t1 = performance.now();
    // Signed as the edge signs: the ingress serves nothing else, and the signature's check is part of the site's cost.
    const headers = { ...routing, ...signSiteHop(stack.ingressSecret(site.site.id), "POST", "/v1/chat/completions", routing, request.body) };
    const direct = await fetch(`${site.ingressUrl}/v1/chat/completions`, { ...request, headers });
    await direct.text();
    const directMs = performance.now() - t1;
    if (direct.status !== 200) throw new Error(`latency probe straight to site ${site.site.id} failed: ${direct.status}`);
    if (i >= 10) diffs.push(edgeMs - directMs); // the first ten warm connections and caches up
  }
  const sorted = sortedAscending(diffs);
  return { p50: round(linearPercentile(sorted, 50), 2), p99: round(linearPercentile(sorted, 99), 2) };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const round = (x: number, digits: number) => Math.round(x * 10 ** digits) / 10 ** digits;
