import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { z } from "zod";
import type { OfferResult } from "../applier/plan-applier.ts";
import { BodyError, closeServer, DEFAULT_BODY_IDLE_MS, listen, readJsonRequest, REQUEST_RECEIPT_TIMEOUTS, sendBodyError, sendJson, sendOpenAiError } from "../util/http.ts";
import { authorize, type LocalApiTokens, type Scope } from "./scopes.ts";
import { invalidSummary } from "../../src/core/schemas/issue-param.ts";

/** What the local API acts on: the agent. */
export interface LocalApiBackend {
  gpuCount: number;
  status(): Promise<unknown>;
  metrics(): Promise<string>;
  /** Graphics clocks GPU `gpu` accepts, MHz (GpuBackend.supportedGraphicsClocks). */
  supportedClocks(gpu: number): Promise<number[]>;
  lockClocks(gpu: number, minMhz: number, maxMhz: number): Promise<void>;
  resetClocks(gpu: number): Promise<void>;
  offerPlan(body: unknown): OfferResult;
  reapply(): void;
}

const ClockMhz = z.number().int().positive();
const ClockBody = z.object({ minMhz: ClockMhz, maxMhz: ClockMhz }).refine((b) => b.minMhz <= b.maxMhz, { message: "maxMhz must be at least minMhz", path: ["maxMhz"] });
type ClockBody = z.infer<typeof ClockBody>;

/**
 * The end of a clock range that lies outside the GPU's supported clocks, with the error naming it
 * and that range; undefined when both ends lie inside, or when the backend lists no clocks (then
 * it has no range to hold the lock to, and the backend's own checks decide).
 */
function clockOutsideSupported(gpu: number, body: ClockBody, supported: readonly number[]): { param: keyof ClockBody; message: string } | undefined {
  if (supported.length === 0) return undefined;
  const lowest = Math.min(...supported);
  const highest = Math.max(...supported);
  const param = (["minMhz", "maxMhz"] as const).find((k) => body[k] < lowest || body[k] > highest);
  return param && { param, message: `${param} ${body[param]} is outside GPU ${gpu}'s supported clocks, ${lowest}-${highest} MHz` };
}

/** A 400 for a value the route refuses, in the edge's words (code `invalid_value`, the field in `param`). */
function sendInvalid(res: ServerResponse, o: { message: string; param: string | null }): void {
  sendOpenAiError(res, 400, o.message, "invalid_value", o.param);
}

type Handler = (req: IncomingMessage, res: ServerResponse, params: string[]) => Promise<void>;
interface Route {
  method: "GET" | "POST";
  path: RegExp;
  scope: Scope;
  handle: Handler;
}

/**
 * The agent's local HTTP API, modelled on zeusd: read scope for `GET /v1/status` and `GET /metrics`,
 * control scope for `POST /v1/gpus/:index/clocks` ({minMhz, maxMhz}), `POST /v1/gpus/:index/clocks/reset`,
 * `POST /v1/plan` (a site plan slice, applied like one from the edge) and `POST /v1/plan/reapply`.
 * No token or an unknown one: 401; a read token on a control route: 403. `GET /healthz` is open.
 * A clock lock outside the GPU's supported clocks is refused (400, the field in `param`); a body
 * sent without `Content-Type: application/json` is 415, as at the edge. A body with no byte for `requestBodyIdleTimeoutMs` (default 10 s) gets 408 `request_timeout`.
 *
 * @example
 * const api = new LocalApiServer(agentBackend, { read: "r...", control: "c..." }, { requestBodyIdleTimeoutMs: 10_000 });
 * const url = await api.start("127.0.0.1", 9400);
 */
export class LocalApiServer {
  private readonly server: Server;
  private readonly routes: Route[];
  private readonly bodyIdleMs: number;

  constructor(
    private readonly backend: LocalApiBackend,
    private readonly tokens: LocalApiTokens,
    options: { requestBodyIdleTimeoutMs?: number } = {},
  ) {
    this.bodyIdleMs = options.requestBodyIdleTimeoutMs ?? DEFAULT_BODY_IDLE_MS;
    this.routes = [
      { method: "GET", path: /^\/v1\/status$/, scope: "read", handle: async (_q, res) => sendJson(res, 200, await backend.status()) },
      { method: "GET", path: /^\/metrics$/, scope: "read", handle: async (_q, res) => void res.writeHead(200, { "content-type": "text/plain; version=0.0.4" }).end(await backend.metrics()) },
      { method: "POST", path: /^\/v1\/gpus\/(\d+)\/clocks$/, scope: "control", handle: (q, res, p) => this.lock(q, res, p) },
      { method: "POST", path: /^\/v1\/gpus\/(\d+)\/clocks\/reset$/, scope: "control", handle: (_q, res, p) => this.reset(res, p) },
      { method: "POST", path: /^\/v1\/plan$/, scope: "control", handle: (q, res) => this.plan(q, res) },
      { method: "POST", path: /^\/v1\/plan\/reapply$/, scope: "control", handle: async (_q, res) => (backend.reapply(), sendJson(res, 202, { reapplying: true })) },
    ];
    this.server = createServer(REQUEST_RECEIPT_TIMEOUTS, (req, res) => void this.dispatch(req, res));
  }

  start(host: string, port: number): Promise<string> {
    return listen(this.server, host, port);
  }

  close(): Promise<void> {
    return closeServer(this.server);
  }

  private async dispatch(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? "/").split("?")[0]!;
    if (path === "/healthz") return sendJson(res, 200, { ok: true });
    const matches = this.routes.filter((r) => r.path.test(path));
    if (matches.length === 0) return sendOpenAiError(res, 404, `no route ${path}`, "not_found");
    const route = matches.find((r) => r.method === req.method);
    if (!route) return sendOpenAiError(res, 405, `${req.method} is not allowed on ${path}`, "method_not_allowed");
    const verdict = authorize(req.headers.authorization, this.tokens, route.scope);
    if (verdict === 401) return sendOpenAiError(res, 401, "missing or unknown token: send 'Authorization: Bearer <read or control token>'", "invalid_token");
    if (verdict === 403) return sendOpenAiError(res, 403, `${req.method} ${path} needs the control token`, "insufficient_scope");
    try {
      await route.handle(req, res, route.path.exec(path)!.slice(1));
    } catch (error) {
      if (error instanceof BodyError) return sendBodyError(res, error);
      if (!res.headersSent) sendOpenAiError(res, 500, (error as Error).message);
    }
  }

  private gpu(res: ServerResponse, params: string[]): number | undefined {
    const gpu = Number(params[0]);
    if (gpu < this.backend.gpuCount) return gpu;
    sendOpenAiError(res, 404, `no GPU ${params[0]}; this host has ${this.backend.gpuCount}`, "unknown_gpu");
    return undefined;
  }

  private async lock(req: IncomingMessage, res: ServerResponse, params: string[]): Promise<void> {
    const gpu = this.gpu(res, params);
    if (gpu === undefined) return;
    const body = ClockBody.safeParse(await readJsonRequest(req, 4096, this.bodyIdleMs));
    if (!body.success) return sendInvalid(res, invalidSummary("clock range", body.error));
    const outside = clockOutsideSupported(gpu, body.data, await this.backend.supportedClocks(gpu));
    if (outside) return sendInvalid(res, outside);
    await this.backend.lockClocks(gpu, body.data.minMhz, body.data.maxMhz);
    sendJson(res, 200, { gpu, locked: body.data });
  }

  private async reset(res: ServerResponse, params: string[]): Promise<void> {
    const gpu = this.gpu(res, params);
    if (gpu === undefined) return;
    await this.backend.resetClocks(gpu);
    sendJson(res, 200, { gpu, locked: null });
  }

  private async plan(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const outcome = this.backend.offerPlan(await readJsonRequest(req, 1024 * 1024, this.bodyIdleMs));
    if (outcome.accepted) return sendJson(res, 202, outcome);
    // A plan that fails its schema is an invalid value at a field, as at the edge; one that parses but this host cannot run is an invalid plan.
    const { param, ...refused } = outcome;
    const code = param === undefined ? "invalid_plan" : "invalid_value";
    sendJson(res, 400, { error: { message: `plan refused: ${outcome.problems.join("; ")}`, type: "invalid_request_error", param: param ?? null, code }, ...refused });
  }
}
