import type { RequestTrace } from "../../src/core/data/azure-trace.ts";
import { seededRng, type Rng } from "../../src/core/ports/rng.ts";
import { chatCompletionRequest } from "./openai-request.ts";
import { readOutcome, type RequestOutcome } from "./request-outcome.ts";

export interface LoadGeneratorOptions {
  edgeUrl: string;
  model: string;
  trace: RequestTrace;
  /** Mean requests per wall second; the trace's inter-arrival times are rescaled to it. */
  rps: number;
  maxOutputTokens: number;
  /** Share of requests sent with `stream: true`. */
  streamShare: number;
  seed: number;
  apiKey?: string;
  /** Give up on a request after this long (counted as an error, never silently). */
  timeoutMs?: number;
  onOutcome?: (outcome: RequestOutcome) => void;
}

/**
 * Replays a request trace against the edge in real time: arrivals keep the trace's burstiness
 * (its inter-arrival times scaled to the target rate, looping at the end), lengths are the trace's
 * (output capped), and each request is shaped like the official OpenAI client's, streaming or not.
 * Every request ends as a RequestOutcome: served, or an error that says why.
 *
 * @example
 * const load = new LoadGenerator({ edgeUrl, model: "llama3.1-8b", trace, rps: 2, maxOutputTokens: 200, streamShare: 0.5, seed: 1 });
 * load.start(); ...; await load.stop();
 */
export class LoadGenerator {
  readonly outcomes: RequestOutcome[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private index = 0;
  private loopOffsetS = 0;
  private startedAtMs = 0;
  private readonly rng: Rng;
  private readonly scale: number;
  private readonly aborts = new Set<AbortController>();

  constructor(private readonly o: LoadGeneratorOptions) {
    const reqs = o.trace.requests;
    if (reqs.length < 2) throw new Error("the trace needs at least two requests");
    const spanS = reqs.at(-1)!.arrivalS - reqs[0]!.arrivalS;
    this.scale = o.rps > 0 ? reqs.length / spanS / o.rps : Infinity;
    this.rng = seededRng(o.seed);
  }

  get sent(): number {
    return this.outcomes.length + this.inFlight.size;
  }

  start(): void {
    if (!Number.isFinite(this.scale)) return;
    this.startedAtMs = performance.now();
    this.schedule();
  }

  /** Stops sending; waits for requests in flight (up to `graceMs`, then aborts them: they count as errors). */
  async stop(graceMs = 30_000): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const timer = setTimeout(() => this.aborts.forEach((a) => a.abort(new Error("the load generator stopped"))), graceMs);
    await Promise.all([...this.inFlight]);
    clearTimeout(timer);
  }

  /** Sends one request now, outside the replay (the e2e tests use this). */
  send(inputTokens: number, outputTokens: number, stream: boolean): Promise<RequestOutcome> {
    const abort = new AbortController();
    this.aborts.add(abort);
    const timeout = setTimeout(() => abort.abort(new Error(`no answer within ${this.o.timeoutMs ?? 120_000} ms`)), this.o.timeoutMs ?? 120_000);
    const started = performance.now();
    const startedMs = Date.now();
    const request = chatCompletionRequest({ model: this.o.model, inputTokens, maxTokens: Math.min(outputTokens, this.o.maxOutputTokens), stream, apiKey: this.o.apiKey });
    const run = fetch(`${this.o.edgeUrl}/v1/chat/completions`, { ...request, signal: abort.signal })
      .then((response) => readOutcome(response, started, stream, () => performance.now()))
      .catch((e: unknown): RequestOutcome => ({
        startedMs: started, stream, status: 0, ok: false, site: null, classId: null, attempts: 1, firstByteMs: null,
        totalMs: performance.now() - started, completionTokens: null, receipt: null, error: `request failed: ${e instanceof Error ? (e.cause instanceof Error ? e.cause.message : e.message) : String(e)}`,
      }))
      .then((outcome) => {
        const o = { ...outcome, startedMs };
        this.outcomes.push(o);
        this.o.onOutcome?.(o);
        return o;
      })
      .finally(() => {
        clearTimeout(timeout);
        this.aborts.delete(abort);
      });
    const tracked = run.then(() => undefined);
    this.inFlight.add(tracked);
    void tracked.finally(() => this.inFlight.delete(tracked));
    return run;
  }

  private schedule(): void {
    const reqs = this.o.trace.requests;
    if (this.index >= reqs.length) {
      this.loopOffsetS += reqs.at(-1)!.arrivalS - reqs[0]!.arrivalS + (reqs[1]!.arrivalS - reqs[0]!.arrivalS);
      this.index = 0;
    }
    const next = reqs[this.index]!;
    const dueMs = this.startedAtMs + (next.arrivalS - reqs[0]!.arrivalS + this.loopOffsetS) * this.scale * 1000;
    this.timer = setTimeout(() => {
      this.index++;
      void this.send(Math.max(1, next.inputTokens), Math.max(1, next.outputTokens), this.rng.next() < this.o.streamShare);
      if (this.timer !== undefined) this.schedule();
    }, Math.max(0, dueMs - performance.now()));
  }
}
