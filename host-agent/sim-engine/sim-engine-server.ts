import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { KvBootstrap, KvHandoffProtocol } from "../../src/core/schemas/kv-transfer.ts";
import type { InstanceRole } from "../../src/core/schemas/plan.ts";
import type { LlmSpec } from "../../src/core/model/llm-specs.ts";
import type { RequestLog } from "../telemetry/request-log.ts";
import { closeServer, DEFAULT_BODY_IDLE_MS, listen, REQUEST_RECEIPT_TIMEOUTS, sendJson, sendOpenAiError } from "../util/http.ts";
import { PrometheusWriter } from "../util/prometheus-text.ts";
import { sleep } from "../util/backoff.ts";
import { handleCompletion } from "./completion-handler.ts";
import { KvRooms } from "./kv-rooms.ts";
import { DEFAULT_BOOTSTRAP_WAIT_MS, DEFAULT_KV_LINK_GBPS, kvReadyAt, kvTransferSeconds, MAX_BOOTSTRAP_WAIT_MS, receiveFromRoom, ROOM_ROUTE } from "./kv-handoff.ts";
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
  /** The handoff it speaks, as vLLM's engines (default) or SGLang's, and its side of it (its plan role). */
  kvProtocol?: KvHandoffProtocol;
  role?: InstanceRole;
  /** Longest an SGLang-style decode engine waits for its prefill partner's KV, ms (wall time). Default 30 s. */
  bootstrapWaitMs?: number;
  /** How long a request body may go without a byte before the request gets 408, ms. Default DEFAULT_BODY_IDLE_MS. */
  requestBodyIdleTimeoutMs?: number;
}

/**
 * The HTTP face of a simulated engine, shaped like vLLM's OpenAI server: `/v1/chat/completions`,
 * `/v1/completions` (JSON or SSE), `/v1/models`, `/health` and vLLM-style Prometheus `/metrics`
 * (`vllm:num_requests_running`, `vllm:num_requests_waiting`, `vllm:gpu_cache_usage_perc`, token
 * counters). While draining it answers new completions with 503. It takes part in vLLM's
 * prefill/decode KV handoff (`kv_transfer_params`, see `handleCompletion`) in either role, or, as
 * SGLang's engines, in the side its plan role gives it (bootstrap rooms). As a prefill engine it
 * keeps each request's KV in its cache until a decode engine reads it from a room its own port
 * serves (`GET /bootstrap/kv/<room>`).
 *
 * @example
 * const server = new SimEngineServer({ engine, llm });
 * const url = await server.start("127.0.0.1", 0);
 */
export class SimEngineServer {
  accepting = true;
  private readonly rooms = new KvRooms();
  private lastRoom = 0;
  /** Requests waiting for their KV from a prefill engine: they wait, as vLLM's and SGLang's count them. */
  private waitingForKv = 0;
  private readonly server: Server;
  private readonly model: string;
  private url: string | undefined;
  /** The instance its requests are recorded under; an engine the applier relabels takes its new one. */
  instanceId: string;

  constructor(private readonly options: SimEngineServerOptions) {
    this.model = options.servedModel ?? options.llm.id;
    this.instanceId = options.instanceId ?? this.model;
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the handler's context reads the label live
    const server = this;
    const { engine } = options;
    const linkGBps = options.kvLinkGBps ?? DEFAULT_KV_LINK_GBPS;
    const ctx = {
      engine: options.engine,
      model: this.model,
      maxContext: options.llm.maxContext,
      defaultMaxTokens: options.defaultMaxTokens ?? 256,
      bodyIdleMs: options.requestBodyIdleTimeoutMs ?? DEFAULT_BODY_IDLE_MS,
      get instanceId() {
        return server.instanceId;
      },
      accepting: () => this.accepting,
      requestLog: options.requestLog,
      nowMs: options.nowMs ?? (() => Date.now()),
      kv: {
        protocol: options.kvProtocol ?? "kv-transfer-params",
        role: options.role ?? "mixed",
        bootstrapWaitMs: options.bootstrapWaitMs ?? DEFAULT_BOOTSTRAP_WAIT_MS,
        keep: (room: number, promptTokens: number) => this.rooms.prefilled(room, promptTokens, engine.parkKv(promptTokens)),
        keepForPull: (promptTokens: number) => {
          const room = ++this.lastRoom;
          this.rooms.prefilled(room, promptTokens, engine.parkKv(promptTokens));
          return kvReadyAt(this.instanceId, this.url ?? "http://127.0.0.1:0", room);
        },
        take: (at: KvBootstrap, promptTokens: number, waitMs: number, signal: AbortSignal) => this.awaitingKv(this.takeKv(at, promptTokens, waitMs, signal, linkGBps)),
      },
    };
    this.server = createServer(REQUEST_RECEIPT_TIMEOUTS, (req, res) => {
      const path = (req.url ?? "/").split("?")[0];
      const route = `${req.method} ${path}`;
      const done = (p: Promise<void>) => p.catch((error: unknown) => (res.headersSent ? res.destroy() : sendOpenAiError(res, 500, (error as Error).message)));
      if (route === "POST /v1/chat/completions") return void done(handleCompletion("chat", req, res, ctx));
      if (route === "POST /v1/completions") return void done(handleCompletion("text", req, res, ctx));
      if (route === "GET /v1/models") return sendJson(res, 200, this.models());
      if (route === "GET /health") return void res.writeHead(200).end();
      if (req.method === "GET" && path?.startsWith(ROOM_ROUTE)) return void done(this.answerRoom(path.slice(ROOM_ROUTE.length), req, res));
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
    this.rooms.clear();
    return closeServer(this.server);
  }

  /**
   * `GET /bootstrap/kv/<room>?wait_ms=N`, where a decode engine reads the KV this engine keeps for it
   * (SGLang's bootstrap server, on the engine's own port; for vLLM's handoff, the room its answer
   * named): answers `{prompt_tokens}` once the room's request is prefilled, and gives the KV's room
   * in the cache back; 404 when it is not within the wait.
   */
  private async answerRoom(roomText: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const room = Number(roomText);
    if (!Number.isSafeInteger(room) || room < 0) return sendOpenAiError(res, 400, `no room ${roomText}`, "invalid_request");
    const asked = Number(new URL(req.url ?? "/", "http://x").searchParams.get("wait_ms"));
    const waitMs = Number.isFinite(asked) && asked > 0 ? Math.min(asked, MAX_BOOTSTRAP_WAIT_MS) : DEFAULT_BOOTSTRAP_WAIT_MS;
    const gone = new AbortController();
    res.on("close", () => gone.abort());
    const promptTokens = await this.rooms.wait(room, waitMs, gone.signal);
    if (promptTokens === undefined) return sendOpenAiError(res, 404, `nothing was prefilled in room ${room} within ${waitMs} ms`, "kv_not_found");
    sendJson(res, 200, { room, prompt_tokens: promptTokens });
  }

  /** Reads a prompt's KV from a prefill engine's room, then waits its bytes over the link; says why when it cannot. */
  private async takeKv(at: KvBootstrap, promptTokens: number, waitMs: number, signal: AbortSignal, linkGBps: number): Promise<string | undefined> {
    const got = await receiveFromRoom(at, waitMs, signal);
    if ("error" in got) return got.error;
    if (got.promptTokens !== promptTokens) return `the room holds the KV of a ${got.promptTokens}-token prompt, this request's has ${promptTokens}`;
    await sleep(Math.ceil(this.options.engine.wallMsFor(kvTransferSeconds(this.options.llm, promptTokens, linkGBps))));
    return undefined;
  }

  /** The engine's load, with the requests waiting for their KV counted as waiting. */
  get load(): { running: number; waiting: number; kvUse: number } {
    const load = this.options.engine.load;
    return { ...load, waiting: load.waiting + this.waitingForKv };
  }

  private async awaitingKv<T>(wait: Promise<T>): Promise<T> {
    this.waitingForKv++;
    try {
      return await wait;
    } finally {
      this.waitingForKv--;
    }
  }

  private models() {
    return { object: "list", data: [{ id: this.model, object: "model", created: 0, owned_by: "greenference-sim", root: this.options.llm.id, max_model_len: this.options.llm.maxContext }] };
  }

  private metrics(): string {
    const { engine } = this.options;
    const load = this.load;
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
