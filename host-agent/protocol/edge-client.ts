import type { Forecast } from "../../src/core/schemas/forecast.ts";
import type { Telemetry } from "../../src/core/schemas/telemetry.ts";
import type { AgentRegistration, AppliedReport } from "../../src/core/schemas/agent-messages.ts";

/** A failed call to the edge: `status` null when it could not be reached at all. */
export class EdgeError extends Error {
  override readonly name = "EdgeError";
  constructor(
    readonly status: number | null,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A plan pull: unchanged since `etag` (304), none issued yet (404 no_plan), or a body to validate. */
export type PlanPull = { kind: "unchanged" } | { kind: "none" } | { kind: "plan"; body: unknown; etag: string | null };

export interface EdgeClientOptions {
  /** The edge's base URL, e.g. https://greenference.example.workers.dev */
  edgeUrl: string;
  site: string;
  /** The site's agent token `gfs_<site>_<hex>`. */
  token: string;
  /** Per-call limit. Default 10 s. */
  timeoutMs?: number;
  fetch?: typeof fetch;
}

/**
 * The agent side of the edge's agent API (`/agent/v1/sites/:site/{register,heartbeat,plan,applied,power-forecast}`,
 * src/worker/agent-api.ts), with the site's bearer token.
 *
 * @example
 * const edge = new EdgeClient({ edgeUrl, site: "wind-a", token });
 * const pull = await edge.pullPlan('"plan-3"'); // { kind: "unchanged" } while plan 3 is current
 */
export class EdgeClient {
  private readonly base: string;
  private readonly fetch: typeof fetch;

  constructor(private readonly options: EdgeClientOptions) {
    this.base = `${options.edgeUrl.replace(/\/+$/, "")}/agent/v1/sites/${encodeURIComponent(options.site)}`;
    this.fetch = options.fetch ?? globalThis.fetch;
  }

  /** Registers the agent; the answer carries the edge's heartbeat interval and plan version. */
  async register(registration: AgentRegistration): Promise<{ heartbeatIntervalMs?: number; planVersion?: number | null }> {
    return (await this.json(await this.call("POST", "/register", registration))) as { heartbeatIntervalMs?: number; planVersion?: number | null };
  }

  async heartbeat(telemetry: Telemetry): Promise<void> {
    await this.json(await this.call("POST", "/heartbeat", telemetry));
  }

  async reportApplied(report: AppliedReport): Promise<void> {
    await this.json(await this.call("POST", "/applied", report));
  }

  /** Pushes the site's power forecast, which the edge's planner plans on until it goes stale. */
  async pushPowerForecast(forecast: Forecast): Promise<void> {
    await this.json(await this.call("POST", "/power-forecast", forecast));
  }

  async pullPlan(etag?: string): Promise<PlanPull> {
    const response = await this.call("GET", "/plan", undefined, etag ? { "if-none-match": etag } : {});
    if (response.status === 304) return { kind: "unchanged" };
    if (response.status === 404) {
      const body = (await response.json().catch(() => null)) as { error?: { code?: string; message?: string } } | null;
      if (body?.error?.code === "no_plan") return { kind: "none" };
      throw new EdgeError(404, `plan: ${body?.error?.message ?? "HTTP 404"}`);
    }
    return { kind: "plan", body: await this.json(response), etag: response.headers.get("etag") };
  }

  private async call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Response> {
    try {
      return await this.fetch(`${this.base}${path}`, {
        method,
        headers: { authorization: `Bearer ${this.options.token}`, ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(this.options.timeoutMs ?? 10_000),
      });
    } catch (error) {
      throw new EdgeError(null, `${method} ${path}: edge unreachable: ${(error as Error).message}`, { cause: error });
    }
  }

  private async json(response: Response): Promise<unknown> {
    const text = await response.text();
    if (!response.ok) {
      let message = `HTTP ${response.status}`;
      try {
        message = (JSON.parse(text) as { error?: { message?: string } }).error?.message ?? message;
      } catch {
        // not an OpenAI-style error body
      }
      throw new EdgeError(response.status, `${response.url || this.base}: ${message}`);
    }
    try {
      return JSON.parse(text);
    } catch {
      throw new EdgeError(response.status, "the edge answered with something that is not JSON");
    }
  }
}
