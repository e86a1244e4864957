import { createExecutionContext, env, runDurableObjectAlarm, waitOnExecutionContext } from "cloudflare:test";
import { vi } from "vitest";
import { createApp, type AppOptions, type EdgeApp } from "../../src/worker/app.ts";
import type { SiteClient } from "../../src/worker/site-client.ts";
import { verifySiteHop } from "./site-hop-verifier.ts";

/** The admin token the tests pass in the env (the Worker reads the ADMIN_TOKEN secret). */
export const ADMIN_TOKEN = "test-admin-token";
/**
 * The env most tests run the edge in: the admin token set and the inference API opened (the
 * wrangler.toml default is closed; test/worker/access.test.ts covers that).
 */
export const testEnv = { ...env, ADMIN_TOKEN, INFERENCE_ACCESS: "open" } as unknown as typeof env & { ADMIN_TOKEN: string };
/** The env as deployed by default: the inference API closed (keys required). */
export const closedEnv = { ...env, ADMIN_TOKEN } as typeof env & { ADMIN_TOKEN: string };
export const MODEL = "llama-3-8b";

const slo = { ttftMs: 300, tbtMs: 80 };

/** Two EU sites and one US site; 2x2 classes (input edge 512, output edge 256). */
export function fleet(sites = ["eu-a", "eu-b", "us-c"]) {
  const rtt: Record<string, Record<string, number>> = { "eu-a": { AMS: 5, EU: 10, NA: 100 }, "eu-b": { AMS: 9, EU: 12, NA: 110 }, "us-c": { EU: 400, NA: 15 } };
  return {
    sites: sites.map((id) => ({
      id,
      region: id.startsWith("eu") ? "eu-west" : "us-east",
      ingressUrl: `https://${id}.sites.test/`,
      gpus: [{ type: "H100-80GB", count: 8 }],
      power: { kind: "fixed", capW: 20_000 },
      carbon: { kind: "fixed", gPerKwh: id === "eu-a" ? 50 : 400 },
      rttMs: rtt[id] ?? {},
    })),
    models: [{ id: MODEL }],
    variants: [{ model: MODEL, id: "base", quality: 1, memoryGb: 16, parameterCount: 8e9 }],
    classScheme: { name: "2x2", inputEdges: [512], outputEdges: [256], inputLabels: ["S", "L"], outputLabels: ["S", "L"] },
    classes: ["SS", "SL", "LS", "LL"].map((id, i) => ({ id, inputBin: i >> 1, outputBin: i & 1, slo })),
    policy: { kind: "greenference", weights: { carbon: 1, latency: 0.1 } },
  };
}

const instance = (id: string, gpu: number) => ({ id, model: MODEL, variant: "base", tp: 1, gpus: [gpu], clock: { mode: "locked", mhz: 1410 } });

/** SS: eu-a/i0 x3 + eu-b/i0 x1; SL: eu-a/i1; LS and LL: eu-b/i1; us-c/i0 serves SS from NA only (RTT). */
export function plan(version: number) {
  return {
    version,
    createdAtMs: 1_700_000_000_000,
    validUntilMs: 1_800_000_000_000,
    policy: "greenference",
    sites: [
      { site: "eu-a", powerCapW: 10_000, instances: [instance("i0", 0), instance("i1", 1)] },
      { site: "eu-b", powerCapW: 10_000, instances: [instance("i0", 0), instance("i1", 1)] },
      { site: "us-c", powerCapW: 10_000, instances: [instance("i0", 0)] },
    ],
    routing: {
      SS: [
        { site: "eu-a", instance: "i0", weight: 3 },
        { site: "eu-b", instance: "i0", weight: 1 },
        { site: "us-c", instance: "i0", weight: 1 },
      ],
      SL: [{ site: "eu-a", instance: "i1", weight: 1 }],
      LS: [{ site: "eu-b", instance: "i1", weight: 1 }],
      LL: [{ site: "eu-b", instance: "i1", weight: 1 }],
    },
  };
}

/** A heartbeat from `site` with its instances ready and `waiting` requests queued at each. */
export function telemetry(site: string, sentAtMs = Date.now(), waiting: Record<string, number> = {}) {
  return {
    site,
    sentAtMs,
    appliedPlanVersion: 1,
    sitePowerW: 2_000,
    gpus: [{ index: 0, type: "H100-80GB", powerW: 400, energyMj: 1e6, smClockMhz: 1410, lockedClockMhz: 1410, health: "ok" }],
    instances: ["i0", "i1"].map((id) => ({ id, state: "ready", waiting: waiting[id] ?? 0, running: 1, kvUse: 0.3 })),
  };
}

/**
 * Lets `site`'s heartbeat deadline pass and runs its SiteDO alarm, which marks it unhealthy and
 * tells ControlDO (the real path; the next heartbeat brings it back).
 */
export async function takeDown(site: string): Promise<void> {
  const stub = env.SITE.get(env.SITE.idFromName(site));
  const now = Date.now();
  vi.spyOn(Date, "now").mockReturnValue(now + Number(env.HEARTBEAT_TIMEOUT_S) * 1000 + 1);
  try {
    await runDurableObjectAlarm(stub);
  } finally {
    vi.restoreAllMocks();
  }
}

/** One upstream call as the fake site saw it. */
export interface UpstreamCall {
  site: string;
  url: string;
  headers: Headers;
  body: Record<string, unknown>;
  /** The raw body, as signed. */
  text: string;
}

type SiteHandler = (call: UpstreamCall) => Response | Promise<Response>;

/** A chat completion as a site answers it, with usage. */
export function completion(completionTokens = 20, extraUsage: Record<string, unknown> = {}): Response {
  return Response.json({
    id: "chatcmpl-1",
    object: "chat.completion",
    model: MODEL,
    choices: [{ index: 0, message: { role: "assistant", content: "hi" }, finish_reason: "stop" }],
    usage: { prompt_tokens: 12, completion_tokens: completionTokens, total_tokens: 12 + completionTokens, ...extraUsage },
  });
}

/**
 * Fake sites behind the SiteClient port: per-site handlers, every call recorded. A site given its
 * ingress secrets (`secrets`) checks the edge's signature as the real gateway does and answers 401
 * (the call is still recorded) when it does not verify.
 */
export class FakeSites {
  readonly calls: UpstreamCall[] = [];
  readonly secrets = new Map<string, string[]>();
  private readonly handlers = new Map<string, SiteHandler>();
  fallback: SiteHandler = () => completion();

  on(site: string, handler: SiteHandler): this {
    this.handlers.set(site, handler);
    return this;
  }

  readonly client: SiteClient = async (url, init) => {
    const site = new URL(url).hostname.split(".")[0]!;
    const text = String(init.body);
    const call = { site, url, headers: new Headers(init.headers), body: JSON.parse(text) as Record<string, unknown>, text };
    this.calls.push(call);
    const secrets = this.secrets.get(site);
    if (secrets) {
      const refused = await verifySiteHop(secrets, "POST", new URL(url).pathname, call.headers, text);
      if (refused) return Response.json({ error: { message: refused, type: "authentication_error", param: null, code: "invalid_signature" } }, { status: 401 });
    }
    return (this.handlers.get(site) ?? this.fallback)(call);
  };
}

/** The app under test, called in workerd with the test env (admin token set). */
export class Edge {
  readonly app: EdgeApp;
  readonly sites = new FakeSites();

  constructor(options: Partial<AppOptions> = {}) {
    this.app = createApp({ siteClient: this.sites.client, ...options });
  }

  async fetch(path: string, init: RequestInit & { cf?: Record<string, unknown> } = {}, envOverride: object = testEnv): Promise<Response> {
    const ctx = createExecutionContext();
    const response = await this.app.fetch(new Request(`https://edge.test${path}`, init), envOverride as typeof env, ctx);
    // A stream's background work lasts until the stream ends (its receipt is kept then), which the test drives.
    if (response.headers.get("content-type")?.includes("text/event-stream")) return response;
    await waitOnExecutionContext(ctx);
    return response;
  }

  /** A JSON call with the admin token. */
  admin(method: string, path: string, body?: unknown): Promise<Response> {
    return this.fetch(path, { method, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
  }

  /** POST /v1/chat/completions with a JSON body (entering at AMS unless told otherwise). */
  chat(body: unknown, headers: Record<string, string> = {}, cf: Record<string, unknown> = { colo: "AMS", continent: "EU" }, envOverride: object = testEnv): Promise<Response> {
    return this.fetch("/v1/chat/completions", { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body), cf }, envOverride);
  }

  /**
   * Fleet and a plan of `version` in ControlDO, a fresh heartbeat from each listed site, and an
   * ingress secret for every site (the fake sites check the edge's signatures with it).
   */
  async setUp(version: number, healthy = ["eu-a", "eu-b", "us-c"]): Promise<void> {
    await expectOk(this.admin("PUT", "/admin/v1/fleet", fleet()));
    await expectOk(this.admin("PUT", "/admin/v1/plan", plan(version)));
    for (const site of healthy) await env.SITE.get(env.SITE.idFromName(site)).heartbeat(telemetry(site));
    for (const site of fleet().sites.map((s) => s.id)) await this.issueIngressSecret(site, 0);
    this.app.context.cache.invalidate();
  }

  /** Rotates `site`'s ingress secret (the old one signs along for `overlapS`) and gives the fake site the new one (and the old while it overlaps). */
  async issueIngressSecret(site: string, overlapS: number, siteKeepsOld = overlapS > 0): Promise<string> {
    const r = await this.admin("POST", `/admin/v1/sites/${site}/ingress-secret?overlap_s=${overlapS}`);
    if (r.status !== 201) throw new Error(`ingress secret for ${site}: ${r.status} ${await r.text()}`);
    const { ingressSecret } = (await r.json()) as { ingressSecret: string };
    this.sites.secrets.set(site, [ingressSecret, ...(siteKeepsOld ? (this.sites.secrets.get(site) ?? []).slice(0, 1) : [])]);
    return ingressSecret;
  }
}

async function expectOk(response: Promise<Response>): Promise<void> {
  const r = await response;
  if (!r.ok) throw new Error(`setup call failed: ${r.status} ${await r.text()}`);
}

/** A short chat request body (class SS unless max_tokens says otherwise). */
export function chatBody(over: Record<string, unknown> = {}) {
  return { model: MODEL, messages: [{ role: "user", content: "Hello, world!" }], max_tokens: 64, ...over };
}

/** The OpenAI error of a response. */
export async function errorOf(response: Response): Promise<{ message: string; type: string; param: string | null; code: string | null }> {
  return ((await response.json()) as { error: { message: string; type: string; param: string | null; code: string | null } }).error;
}
