/**
 * `work`'s result, or a rejection with `signal.reason` as soon as `signal` aborts (`work` itself
 * goes on, unwatched).
 *
 * @example
 * await abortable(orphans.endOverlapping(gpus), stop.signal); // rejects at once on stop.abort(error)
 */
export function abortable<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}
