/** One measured run of a bounded closed loop. */
export interface LoadRun {
  requests: number;
  failures: number;
  seconds: number;
  rps: number;
  /** The first failure's status and body, to say why. */
  firstFailure?: string;
}

/**
 * Sends `requests` POSTs with `concurrency` workers in a closed loop (each sends its next request
 * when the previous answer has been read completely) and measures requests per second.
 */
export async function closedLoop(url: string, body: string, requests: number, concurrency: number, now: () => number, timeoutMs = 10_000): Promise<LoadRun> {
  let next = 0;
  let failures = 0;
  let firstFailure: string | undefined;
  const started = now();
  const worker = async () => {
    while (next < requests) {
      next++;
      try {
        const r = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body, signal: AbortSignal.timeout(timeoutMs) });
        const text = await r.text();
        if (!r.ok) {
          failures++;
          firstFailure ??= `HTTP ${r.status}: ${text.slice(0, 300)}`;
        }
      } catch (error) {
        failures++;
        firstFailure ??= error instanceof Error ? error.message : String(error);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = (now() - started) / 1000;
  return { requests, failures, seconds, rps: requests / seconds, ...(firstFailure ? { firstFailure } : {}) };
}
