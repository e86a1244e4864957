import { createServer, type Server } from "node:http";
import type { LlmSpec } from "../../src/core/model/llm-specs.ts";
import type { RequestLog } from "../telemetry/request-log.ts";
import { closeServer, listen, sendJson, sendOpenAiError } from "../util/http.ts";
import { PrometheusWriter } from "../util/prometheus-text.ts";
import { sleep } from "../util/backoff.ts";
import { handleCompletion } from "./completion-handler.ts";
import { DEFAULT_KV_LINK_GBPS, kvReadyAt, kvTransferSeconds } from "./kv-handoff.ts";
import type { RealtimeEngine } from "./realtime-engine.ts";

export interface SimEngineServerOptions {
  engine: RealtimeEngine;
  llm: LlmSpec;
  /** Model name clients ask for; the LLM spec's id by default. */
  servedModel?: string;
  instanceId?: string;
  /** Output tokens of a chat request without max_tokens. Default 256. */
  defaultMaxTokens?: number;
  requestLog?: RequestLog;
  /** Site clock (ms) for the request log: the simulated site's clock. Default `Date.now`. */
  nowMs?: () => number;
  /** Bandwidth it pulls a prompt's KV from a prefill engine at, GB/s. Default `DEFAULT_KV_LINK_GBPS`. */
  kvLinkGBps?: number;
}

/**
 * The HTTP face of a simulated engine, shaped like vLLM's OpenAI server: `/v1/chat/completions`,
 * `/v1/completions` (JSON or SSE), `/v1/models`, `/health` and vLLM-style Prometheus `/metrics`
 * (`vllm:num_requests_running`, `vllm:num_requests_waiting`, `vllm:gpu_cache_usage_perc`, token
 * counters). While draining it answers new completions with 503. It takes part in vLLM's
 * prefill/decode KV handoff (`kv_transfer_params`, see `handleCompletion`) in either role.
 *
 * @example
 * const server = new SimEngineServer({ engine, llm });
 * const url = await server.start("127.0.0.1", 0);
 */
export class SimEngineServer {
  accepting = true;
  private readonly server: Server;
  private readonly model: string;
  private url: string | undefined;

  constructor(private readonly options: SimEngineServerOptions) {
    this.model = options.servedModel ?? options.llm.id;
    const { engine, llm } = options;
    const linkGBps = options.kvLinkGBps ?? DEFAULT_KV_LINK_GBPS;
    const ctx = {
      engine: options.engine,
      model: this.model,
      maxContext: options.llm.maxContext,
      defaultMaxTokens: options.defaultMaxTokens ?? 256,
      instanceId: options.instanceId ?? this.model,
      accepting: () => this.accepting,
      requestLog: options.requestLog,
      nowMs: options.nowMs ?? (() => Date.now()),
      kv: {
        readyAt: () => kvReadyAt(options.instanceId ?? this.model, this.url ?? "http://127.0.0.1:0"),
        pull: (promptTokens: number) => sleep(Math.ceil(engine.wallMsFor(kvTransferSeconds(llm, promptTokens, linkGBps)))),
      },
    };
    this.server = createServer((req, res) => {
      const path = (req.url ?? "/").split("?")[0];
      const route = `${req.method} ${path}`;
      const done = (p: Promise<void>) => p.catch((error: unknown) => (res.headersSent ? res.destroy() : sendOpenAiError(res, 500, (error as Error).message)));
      if (route === "POST /v1/chat/completions") return void done(handleCompletion("chat", req, res, ctx));
      if (route === "POST /v1/completions") return void done(handleCompletion("text", req, res, ctx));
      if (route === "GET /v1/models") return sendJson(res, 200, this.models());
      if (route === "GET /health") return void res.writeHead(200).end();
      if (route === "GET /metrics") return void res.writeHead(200, { "content-type": "text/plain; version=0.0.4" }).end(this.metrics());
      sendOpenAiError(res, 404, `no route ${route}`, "not_found");
    });
  }

  async start(host: string, port: number): Promise<string> {
    this.url = await listen(this.server, host, port);
    return this.url;
  }

  close(): Promise<void> {
    this.accepting = false;
    return closeServer(this.server);
  }

  private models() {
    return { object: "list", data: [{ id: this.model, object: "model", created: 0, owned_by: "greenference-sim", root: this.options.llm.id, max_model_len: this.options.llm.maxContext }] };
  }

  private metrics(): string {
    const { engine } = this.options;
    const load = engine.load;
    const totals = engine.totals;
    const labels = { model_name: this.model };
    return new PrometheusWriter()
      .family("vllm:num_requests_running", "gauge", "Number of requests currently running on GPU.", [[labels, load.running]])
      .family("vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed.", [[labels, load.waiting]])
      .family("vllm:gpu_cache_usage_perc", "gauge", "KV-cache usage; 1 means 100 percent.", [[labels, load.kvUse]])
      .family("vllm:prompt_tokens_total", "counter", "Prefill tokens processed.", [[labels, totals.promptTokens]])
      .family("vllm:generation_tokens_total", "counter", "Generation tokens processed.", [[labels, totals.generationTokens]])
      .family("vllm:request_success_total", "counter", "Requests finished.", [[labels, totals.finished]])
      .family("greenference_sim_engine_energy_joules_total", "counter", "Energy of the engine's GPUs in the engine model.", [[labels, engine.energyJ]])
      .text();
  }
}
