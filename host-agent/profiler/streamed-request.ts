/** What one profiled request took, in the engine's time (ms); undefined latencies when it failed. */
export interface RequestOutcome {
  ok: boolean;
  ttftMs: number;
  /** Mean gap between output tokens after the first; NaN for a one-token answer. */
  tbtMs: number;
  e2eMs: number;
  /** Why it failed, when it did. */
  error?: string;
}

/** `tokens` prompt tokens by the edge's estimate (one per word, plus the chat framing's 6): what the profiler asks with. */
export function promptOfTokens(tokens: number): string {
  return "w ".repeat(Math.max(1, tokens - 6)).trimEnd();
}

/**
 * Sends one streamed chat completion to an engine's OpenAI API and times it as a client sees it:
 * TTFT to the first event with output, the mean gap between output events after it, end to end.
 * `speed` is the engine's time per wall time (a simulated engine may run faster), so the figures
 * are in the engine's time. Outputs are forced to `outputTokens` where the engine allows it
 * (vLLM's `ignore_eos`).
 *
 * @example
 * const o = await streamedRequest("http://127.0.0.1:8000", "llama-8b", 512, 128, 1); // { ok: true, ttftMs: 41, tbtMs: 9.8, e2eMs: 1290 }
 */
export async function streamedRequest(url: string, model: string, inputTokens: number, outputTokens: number, speed: number, signal?: AbortSignal): Promise<RequestOutcome> {
  const t0 = performance.now();
  const elapsed = () => (performance.now() - t0) * speed;
  const failed = (error: string): RequestOutcome => ({ ok: false, ttftMs: NaN, tbtMs: NaN, e2eMs: elapsed(), error });
  let response: Response;
  try {
    response = await fetch(`${url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model, messages: [{ role: "user", content: promptOfTokens(inputTokens) }], max_tokens: outputTokens, ignore_eos: true, stream: true, stream_options: { include_usage: true } }),
      signal,
    });
  } catch (error) {
    return failed((error as Error).message);
  }
  if (!response.ok || !response.body) return failed(`HTTP ${response.status}: ${(await response.text().catch(() => "")).slice(0, 200)}`);
  let first: number | undefined;
  let last: number | undefined;
  let events = 0;
  let pending = "";
  const decoder = new TextDecoder();
  try {
    for await (const chunk of response.body) {
      pending += decoder.decode(chunk, { stream: true });
      let cut: number;
      while ((cut = pending.indexOf("\n\n")) >= 0) {
        const event = pending.slice(0, cut);
        pending = pending.slice(cut + 2);
        if (!/"choices"\s*:\s*\[\s*\{/.test(event)) continue;
        const t = elapsed();
        first ??= t;
        last = t;
        events++;
      }
    }
  } catch (error) {
    return failed((error as Error).message);
  }
  if (first === undefined) return failed("the answer streamed no output");
  return { ok: true, ttftMs: first, tbtMs: events > 1 ? (last! - first) / (events - 1) : NaN, e2eMs: elapsed() };
}
