import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { estimateInputTokens } from "../../src/core/classify/token-estimate.ts";
import { chatPromptShape } from "../../src/core/classify/prompt-shape.ts";
import type { ChatCompletionRequest } from "../../src/core/schemas/openai-request.ts";
import { closeServer, listen } from "../util/http.ts";

/** What the engine's work costs: the truth the fake NVML counter is charged with. */
export interface EnergyCosts {
  /** Power while serving, beyond the tokens' own energy, W (split among the iteration's requests by their energy). */
  busyW: number;
  /** Power with nothing to serve, W (no request's). */
  idleW: number;
  prefillJPerToken: number;
  decodeJPerToken: number;
  /** Extra decode energy per 1000 tokens of context the token attends to, J. */
  decodeJPerKvKiloToken: number;
}

export interface MeteredEngineOptions {
  /** Books energy on a GPU's counter (the fake NVML's `fake_nvml_charge`). */
  charge(gpu: number, joules: number): void;
  gpus: readonly number[];
  costs: EnergyCosts;
  /** Wall ms of an iteration without prefills. */
  iterationMs: number;
  /** Wall ms an iteration takes longer per prompt token it prefills. */
  prefillMsPerToken: number;
  /** Requests in a batch at once; more wait. */
  maxBatch: number;
}

interface Live {
  id: string;
  promptTokens: number;
  outputTokens: number;
  generated: number;
  stream: boolean;
  includeUsage: boolean;
  res: ServerResponse;
  truthJ: number;
}

/**
 * A stand-in for a vLLM server that knows what every request truly cost: it runs continuous
 * batching in wall time (each iteration: waiting requests are prefilled into the batch, the
 * others decode one token; it lasts `iterationMs` plus its prefills' time), charges each
 * iteration's energy at its end (busy power over the iteration plus each request's prefill or
 * decode energy) to its GPUs' counters in the fake NVML library, and books each request its share
 * of that energy by its own energy in the iteration. Idle time is charged at idle power to no request. Streams one SSE event per token, as vLLM does, with a
 * usage event when asked; `truthJ(id)` is a finished request's true energy (by its completion id).
 *
 * @example
 * const engine = new MeteredEngine({ charge: fake.charge, gpus: [0], costs, iterationMs: 10, maxBatch: 32 });
 * const url = await engine.start();
 */
export class MeteredEngine {
  private readonly server: Server;
  private readonly waiting: Live[] = [];
  private readonly batch: Live[] = [];
  private readonly truth = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  /** The batch of the iteration under way, fixed when it began. */
  private running: Live[] = [];
  private lastMs = performance.now();
  private next = 1;

  constructor(private readonly o: MeteredEngineOptions) {
    this.server = createServer((req, res) => this.route(req, res));
  }

  async start(): Promise<string> {
    const url = await listen(this.server, "127.0.0.1", 0);
    this.lastMs = performance.now();
    this.schedule(this.o.iterationMs);
    return url;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await closeServer(this.server, 0);
  }

  /** The true energy of a finished request, J. */
  truthJ(completionId: string): number | undefined {
    return this.truth.get(completionId);
  }

  private route(req: IncomingMessage, res: ServerResponse): void {
    const path = (req.url ?? "/").split("?")[0];
    if (req.method === "GET" && path === "/health") return void res.writeHead(200).end();
    if (req.method === "GET" && path === "/metrics") {
      const text = `# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running ${this.batch.length}\n# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting ${this.waiting.length}\n`;
      return void res.writeHead(200, { "content-type": "text/plain; version=0.0.4" }).end(text);
    }
    if (req.method !== "POST" || path !== "/v1/chat/completions") return void res.writeHead(404).end();
    let text = "";
    req.on("data", (c: Buffer) => (text += c.toString()));
    req.on("end", () => {
      const body = JSON.parse(text) as ChatCompletionRequest;
      const live: Live = {
        id: `chatcmpl-${this.next++}`,
        promptTokens: estimateInputTokens(chatPromptShape(body)),
        outputTokens: Math.max(1, body.max_tokens ?? 16),
        generated: 0,
        stream: body.stream === true,
        includeUsage: body.stream_options?.include_usage === true,
        res,
        truthJ: 0,
      };
      if (live.stream) res.writeHead(200, { "content-type": "text/event-stream" });
      this.waiting.push(live);
    });
  }

  private schedule(ms: number): void {
    if (!this.stopped) this.timer = setTimeout(() => this.iterate(), ms);
  }

  /**
   * Ends the iteration under way (its energy charged and split, its tokens sent) and begins the
   * next: the batch admits what waits, and the iteration lasts `iterationMs` plus its prefills'
   * time. With nothing to do, idle power is charged every `iterationMs`.
   */
  private iterate(): void {
    const now = performance.now();
    const seconds = (now - this.lastMs) / 1e3;
    this.lastMs = now;
    const { costs } = this.o;
    if (this.running.length === 0) this.charge(costs.idleW * seconds);
    else this.deliver(this.running, costs.busyW * seconds);
    while (this.batch.length < this.o.maxBatch && this.waiting.length > 0) this.batch.push(this.waiting.shift()!);
    this.running = [...this.batch];
    const prefill = this.running.reduce((n, r) => n + (r.generated === 0 ? r.promptTokens : 0), 0);
    this.schedule(this.o.iterationMs + prefill * this.o.prefillMsPerToken);
  }

  /** Charges the iteration of `batch` (busy energy plus each request's own) and books each its share by its own energy. */
  private deliver(batch: Live[], busyJ: number): void {
    const { costs } = this.o;
    const own = batch.map((r) => (r.generated === 0 ? costs.prefillJPerToken * r.promptTokens : costs.decodeJPerToken + (costs.decodeJPerKvKiloToken * (r.promptTokens + r.generated)) / 1000));
    const dynamic = own.reduce((a, b) => a + b, 0);
    const energy = busyJ + dynamic;
    this.charge(energy);
    batch.forEach((r, i) => (r.truthJ += (energy * own[i]!) / dynamic));
    for (const r of batch) {
      r.generated++;
      if (r.stream) r.res.write(`data: ${JSON.stringify({ id: r.id, object: "chat.completion.chunk", choices: [{ index: 0, delta: { content: "w" } }] })}\n\n`);
      if (r.generated >= r.outputTokens) this.finish(r);
    }
  }

  private finish(r: Live): void {
    this.batch.splice(this.batch.indexOf(r), 1);
    this.truth.set(r.id, r.truthJ);
    const usage = { prompt_tokens: r.promptTokens, completion_tokens: r.generated, total_tokens: r.promptTokens + r.generated };
    if (!r.stream) {
      r.res.writeHead(200, { "content-type": "application/json" });
      return void r.res.end(JSON.stringify({ id: r.id, object: "chat.completion", choices: [{ index: 0, message: { role: "assistant", content: "w".repeat(r.generated) }, finish_reason: "length" }], usage }));
    }
    if (r.includeUsage) r.res.write(`data: ${JSON.stringify({ id: r.id, object: "chat.completion.chunk", choices: [], usage })}\n\n`);
    r.res.end("data: [DONE]\n\n");
  }

  private charge(joules: number): void {
    for (const gpu of this.o.gpus) this.o.charge(gpu, joules / this.o.gpus.length);
  }
}
