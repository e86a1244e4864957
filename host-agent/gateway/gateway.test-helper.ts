import type { KvHandoffProtocol } from "../../src/core/schemas/kv-transfer.ts";
import { groupState } from "../applier/instance-state.ts";
import { sliceBody, type InstanceInput } from "../applier/plan-fixtures.test-helper.ts";
import type { Engine } from "../engines/engine.ts";
import type { PolicyKind } from "../../src/core/schemas/fleet.ts";
import type { SitePlan } from "../../src/core/schemas/plan.ts";
import { SitePlanSlice } from "../protocol/plan-slice.ts";
import { SimEngineDriver } from "../sim-engine/sim-engine-driver.ts";
import { SimulatedSite } from "../sim-engine/simulated-site.ts";
import { parsePrometheusText, PrometheusWriter, sumOf } from "../util/prometheus-text.ts";
import { writeGatewayMetrics } from "./gateway-metrics.ts";
import { IngressAuth, signSiteHop } from "./ingress-auth.ts";
import { launchOf } from "./scripted-replica.test-helper.ts";
import { serviceModel } from "./service-model.ts";
import { SiteGateway, type SiteGatewayOptions } from "./site-gateway.ts";

/** The site the gateway tests run, and its ingress secret (the edge's signing key). */
export const SITE = "wind-a";
export const INGRESS_SECRET = `gfi_${"5e".repeat(32)}`;

const cleanups: (() => Promise<void>)[] = [];

/** Stops what the test started, newest first (call from afterEach). */
export async function cleanUp(): Promise<void> {
  for (const c of cleanups.splice(0).reverse()) await c();
}

export async function started<E extends Engine>(engine: E): Promise<E> {
  await engine.start();
  cleanups.push(() => engine.stop());
  return engine;
}

/**
 * A gateway on 127.0.0.1 over `engines` and a plan of `instances`, taking requests signed with
 * INGRESS_SECRET. `site`: the plan's queue discipline, decode routing and balance for this site. `applying`: whether the plan is still being applied (the default) or the applier
 * has given up on it.
 */
export async function gatewayOver(engines: Engine[], instances: InstanceInput[], options: Partial<SiteGatewayOptions> & { routing?: Parameters<typeof sliceBody>[3]; policy?: PolicyKind; site?: Pick<SitePlan, "queue" | "decodeRouting" | "balance">; applying?: boolean } = {}) {
  const body = sliceBody(1, SITE, instances, options.routing);
  const slice = SitePlanSlice.parse({ ...body, site: body.site && { ...body.site, ...options.site }, ...(options.policy ? { policy: options.policy } : {}) });
  const instanceState = (id: string) => groupState(engines.filter((e) => e.launch.instanceId === id), options.applying ?? true);
  const gateway = new SiteGateway({
    view: { site: SITE, engines: () => engines, slice: () => slice, instanceState },
    ingress: new IngressAuth({ secrets: [INGRESS_SECRET] }),
    scheduler: "fifo-rr",
    replicaConcurrency: 8,
    queueMax: 64,
    queueWaitMs: 5000,
    defaultOutputTokens: 64,
    predict: serviceModel({ gpuTypes: ["H100-80GB", "H100-80GB", "H100-80GB", "H100-80GB"], speed: 1, fallback: { ttftMs: 500, tbtMs: 50 }, clockOf: () => undefined }),
    ...options,
  });
  const url = await gateway.start("127.0.0.1", 0);
  cleanups.push(() => gateway.close(0));
  /** A gateway counter's sum over the series whose labels include `labels`. */
  const metric = (name: string, labels: Record<string, string> = {}) => {
    const samples = parsePrometheusText(writeGatewayMetrics(new PrometheusWriter(), SITE, gateway.metrics()).text());
    return sumOf(samples.filter((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v)), name) ?? 0;
  };
  return { gateway, url, metric };
}

/** `fetch`, signed as the edge signs (with `secret`, INGRESS_SECRET by default). */
export function signedFetch(url: string, init: { method?: string; headers?: Record<string, string>; body?: string; signal?: AbortSignal } = {}, secret = INGRESS_SECRET): Promise<Response> {
  const method = init.method ?? "GET";
  const headers = init.headers ?? {};
  return fetch(url, { ...init, method, headers: { ...headers, ...signSiteHop(secret, method, new URL(url).pathname, headers, init.body ?? "") } });
}

export const chatBody = (body: Record<string, unknown> = {}) => JSON.stringify({ model: "llama3.1-8b", messages: [{ role: "user", content: "Hello there" }], max_tokens: 5, ...body });

/** A signed chat completion request as the edge sends it, for `instance` in class SM. */
export const chat = (url: string, instance: string | undefined, body: Record<string, unknown> = {}, extra: { signal?: AbortSignal; headers?: Record<string, string> } = {}) =>
  signedFetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-greenference-class": "SM", ...(instance ? { "x-greenference-instance": instance } : {}), ...extra.headers },
    body: chatBody(body),
    ...(extra.signal ? { signal: extra.signal } : {}),
  });

export async function simEngines(...launches: Parameters<typeof launchOf>[]) {
  return simEnginesAt(20, ...launches);
}

export async function simEnginesAt(speed: number, ...launches: Parameters<typeof launchOf>[]) {
  return simEnginesWith({ speed }, ...launches);
}

/** Simulated engines at `speed` (default 20) speaking the KV handoff `kvProtocol` (default vLLM's). */
export async function simEnginesWith(o: { speed?: number; kvProtocol?: KvHandoffProtocol }, ...launches: Parameters<typeof launchOf>[]) {
  const site = await SimulatedSite.open({ gpuType: "H100-80GB", gpuCount: 4, speed: o.speed ?? 20 });
  const driver = new SimEngineDriver({ site, ...(o.kvProtocol ? { kvProtocol: o.kvProtocol } : {}) });
  return Promise.all(launches.map((l) => started(driver.create(launchOf(...l)))));
}
