import { exponential, seededRng } from "../../src/core/ports/rng.ts";
import { SitePlanSlice } from "../../host-agent/protocol/plan-slice.ts";
import type { Engine, EngineLaunch } from "../../host-agent/engines/engine.ts";
import { randomBytes } from "node:crypto";
import { IngressAuth, signSiteHop } from "../../host-agent/gateway/ingress-auth.ts";
import { SiteGateway } from "../../host-agent/gateway/site-gateway.ts";
import { buildFakeNvml } from "../../host-agent/gpu/fake-nvml.test-helper.ts";
import { NvmlBackend } from "../../host-agent/gpu/nvml/nvml-backend.ts";
import { EnergyMeter } from "../../host-agent/receipts/energy-meter.ts";
import { MeteredEngine, type EnergyCosts } from "../../host-agent/test-fixtures/metered-engine.ts";
import { sleep } from "../../host-agent/util/backoff.ts";

/** Costs of an 8B-class model on one GPU, in the range published for A100/H100 serving. */
export const RECEIPT_COSTS: EnergyCosts = { busyW: 180, idleW: 60, prefillJPerToken: 0.01, decodeJPerToken: 0.25, decodeJPerKvKiloToken: 0.08 };

export interface ReceiptAccuracyOptions {
  /** Requests sent first and not scored: the meter's energy model learns from their intervals, as a running site's has. */
  warmup: number;
  /** Requests scored. */
  requests: number;
  /** Poisson arrivals, req/s. */
  rps: number;
  seed: number;
  /** The fake engine's iteration period, ms. */
  iterationMs: number;
}

export interface ReceiptAccuracy {
  /** Mean of |measured - true| / true over the requests with a measured receipt. */
  mean_abs_rel_error: number;
  p90_abs_rel_error: number;
  /** Scored requests whose answer carried a measured receipt. */
  measured: number;
  requests: number;
  /** Energy of the receipts over the true energy of the same requests. */
  total_ratio: number;
  inputs: ReceiptAccuracyOptions & { costs: EnergyCosts; prompt_tokens: [number, number]; output_tokens: [number, number]; sample_ms: number };
}

const PROMPT_RANGE: [number, number] = [20, 3000];
const OUTPUT_RANGE: [number, number] = [4, 200];
const SAMPLE_MS = 200;
/** A 3000-token prompt adds 60 ms to its iteration, about what an 8B model's prefill takes on an H100. */
const PREFILL_MS_PER_TOKEN = 0.02;

/**
 * How close the agent's measured receipts come to each request's true energy: a fake vLLM
 * (`MeteredEngine`) charges the fake NVML library's energy counter with what every iteration
 * costs and knows each request's true share; the real site gateway, with its `EnergyMeter`
 * reading that counter through the NVML FFI path, serves a mixed Poisson load (prompts 20..3000
 * tokens, outputs 4..200, log-uniform, all streamed with usage) and puts its measured receipt in
 * each answer, which is compared with the truth. The first `warmup` requests are not scored: the
 * meter's energy model (busy and idle power, energy per token) is fitted online from the intervals
 * it reads, and a running site's has long been fitted.
 *
 * @example
 * (await runReceiptAccuracy({ warmup: 20, requests: 100, rps: 8, seed: 5, iterationMs: 10 })).mean_abs_rel_error; // ~0.03
 */
export async function runReceiptAccuracy(o: ReceiptAccuracyOptions): Promise<ReceiptAccuracy> {
  const fake = buildFakeNvml();
  fake.setEnv({ FAKE_NVML_LOG: null, FAKE_NVML_ENERGY: "charged" });
  const nvml = new NvmlBackend({ libraryPath: fake.libraryPath });
  await nvml.init();
  const engine = new MeteredEngine({ charge: (gpu, j) => fake.charge(gpu, j), gpus: [0], costs: RECEIPT_COSTS, iterationMs: o.iterationMs, prefillMsPerToken: PREFILL_MS_PER_TOKEN, maxBatch: 32 });
  const meter = new EnergyMeter({ energyJ: (gpu) => nvml.totalEnergyJ(gpu), sampleMs: SAMPLE_MS });
  const url = await engine.start();
  const replica = urlEngine({ instanceId: "m", replica: 0, model: "m", variant: "base", tp: 1, gpus: [0], role: "mixed" }, url);
  const slice = SitePlanSlice.parse({ version: 1, policy: "greenference", createdAtMs: 0, validUntilMs: 1, site: { site: "bench", powerCapW: 1000, instances: [{ id: "m", model: "m", variant: "base", tp: 1, gpus: [0], clock: { mode: "locked", mhz: 1410 } }] } });
  // The gateway takes only requests the edge signed: the bench signs as the edge, with a secret of its own.
  const secret = `gfi_${randomBytes(32).toString("hex")}`;
  const gateway = new SiteGateway({
    view: { site: "bench", engines: () => [replica], slice: () => slice, instanceState: () => "ready" },
    ingress: new IngressAuth({ secrets: [secret] }),
    scheduler: "fifo-rr",
    replicaConcurrency: 64,
    queueMax: 1024,
    queueWaitMs: 60_000,
    defaultOutputTokens: 64,
    predict: () => ({ isolatedMs: () => 1000 }),
    meter,
  });
  const gatewayUrl = await gateway.start("127.0.0.1", 0);
  const rng = seededRng(o.seed);
  const logUniform = ([lo, hi]: [number, number]) => Math.floor(Math.exp(Math.log(lo) + rng.next() * (Math.log(hi) - Math.log(lo))));
  const pairs: { measured: number | undefined; truth: number | undefined }[] = [];
  try {
    const sent: Promise<void>[] = [];
    for (let i = 0; i < o.warmup + o.requests; i++) {
      const scored = i >= o.warmup;
      sent.push(ask(gatewayUrl, secret, logUniform(PROMPT_RANGE), logUniform(OUTPUT_RANGE)).then(({ id, energyJ }) => void (scored && pairs.push({ measured: energyJ, truth: id === undefined ? undefined : engine.truthJ(id) }))));
      await sleep(exponential(rng, o.rps) * 1e3);
    }
    await Promise.all(sent);
  } finally {
    await gateway.close(0);
    meter.stop();
    await engine.stop();
    await nvml.shutdown();
  }
  const errors = pairs.filter((p) => p.measured !== undefined && p.truth !== undefined && p.truth > 0).map((p) => Math.abs(p.measured! - p.truth!) / p.truth!);
  const sorted = [...errors].sort((a, b) => a - b);
  const measuredPairs = pairs.filter((p) => p.measured !== undefined && p.truth !== undefined);
  const r = (x: number) => Math.round(x * 1e4) / 1e4;
  return {
    mean_abs_rel_error: r(errors.reduce((a, b) => a + b, 0) / Math.max(1, errors.length)),
    p90_abs_rel_error: r(sorted[Math.min(sorted.length - 1, Math.ceil(0.9 * sorted.length) - 1)] ?? NaN),
    measured: errors.length,
    requests: o.requests,
    total_ratio: r(measuredPairs.reduce((s, p) => s + p.measured!, 0) / measuredPairs.reduce((s, p) => s + p.truth!, 0)),
    inputs: { ...o, costs: RECEIPT_COSTS, prompt_tokens: PROMPT_RANGE, output_tokens: OUTPUT_RANGE, sample_ms: SAMPLE_MS },
  };
}

/** One streamed chat request with `prompt` tokens and `output` tokens out; its completion id and receipt. */
async function ask(url: string, secret: string, prompt: number, output: number): Promise<{ id: string | undefined; energyJ: number | undefined }> {
  const routing = { "x-greenference-instance": "m" };
  const body = JSON.stringify({ model: "m", messages: [{ role: "user", content: "w ".repeat(Math.max(1, prompt - 7)) }], max_tokens: output, stream: true, stream_options: { include_usage: true } });
  const response = await fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", ...routing, ...signSiteHop(secret, "POST", "/v1/chat/completions", routing, body) },
    body,
  });
  const events = (await response.text()).split("\n\n").filter((e) => e.startsWith("data: {"));
  const last = events.length > 0 ? (JSON.parse(events.at(-1)!.slice(6)) as { id?: string; usage?: { greenference?: { energy_j?: number; energy_source?: string } } }) : undefined;
  const receipt = last?.usage?.greenference;
  return { id: last?.id, energyJ: receipt?.energy_source === "measured" ? receipt.energy_j : undefined };
}

/** An engine the gateway can send to: a running server at `url`. */
function urlEngine(launch: EngineLaunch, url: string): Engine {
  return {
    kind: "vllm",
    launch,
    state: "ready",
    url,
    accepting: true,
    recordsRequests: false,
    start: async () => undefined,
    load: async () => ({ running: 0, waiting: 0, kvUse: 0 }),
    drain: async () => ({ drained: true, running: 0 }),
    stop: async () => undefined,
    setClock: () => undefined,
    relabel: () => undefined,
  };
}
