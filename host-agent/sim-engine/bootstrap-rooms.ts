/** Rooms a simulated prefill engine remembers as prefilled, and decode engines it keeps waiting, at most. */
export const MAX_ROOMS = 4096;

/** How long a prefilled room's KV waits for its decode engine, ms. */
export const ROOM_TTL_MS = 60_000;

/**
 * The bootstrap rooms of a simulated SGLang prefill engine: the prefilled requests whose KV waits
 * for a decode engine, by room number, and the decode engines waiting for a room not yet
 * prefilled (both engines get the request at once, so either may come first). A room is taken by
 * the first decode engine that asks, and one decode engine waits in a room at a time. Both lists
 * are bounded: past `MAX_ROOMS` the oldest prefilled room is dropped, and a further waiter is
 * refused at once.
 *
 * @example
 * const rooms = new BootstrapRooms(() => Date.now());
 * const tokens = rooms.wait(7, 30_000, signal); // a decode engine asks first
 * rooms.prefilled(7, 1200); // tokens resolves to 1200
 */
export class BootstrapRooms {
  private readonly ready = new Map<number, { promptTokens: number; atMs: number }>();
  /** Room -> how to wake the decode engine waiting in it (one per room). */
  private readonly waiters = new Map<number, (promptTokens: number | undefined) => void>();

  constructor(private readonly nowMs: () => number) {}

  /** A request in `room` is prefilled: its waiting decode engine (if any) takes the KV, else it waits for one. */
  prefilled(room: number, promptTokens: number): void {
    const waiter = this.waiters.get(room);
    if (waiter) return waiter(promptTokens);
    this.expire();
    if (this.ready.size >= MAX_ROOMS) this.ready.delete(this.ready.keys().next().value!);
    this.ready.set(room, { promptTokens, atMs: this.nowMs() });
  }

  /**
   * The prompt tokens whose KV `room` holds, once prefilled; undefined when it is not within
   * `timeoutMs`, when `signal` aborts, or when too many decode engines wait already.
   */
  wait(room: number, timeoutMs: number, signal: AbortSignal): Promise<number | undefined> {
    this.expire();
    const got = this.ready.get(room);
    if (got) {
      this.ready.delete(room);
      return Promise.resolve(got.promptTokens);
    }
    if (this.waiters.size >= MAX_ROOMS || this.waiters.has(room) || signal.aborted) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const wake = (tokens: number | undefined) => {
        clearTimeout(timer);
        signal.removeEventListener("abort", gone);
        this.waiters.delete(room);
        resolve(tokens);
      };
      const gone = () => wake(undefined);
      const timer = setTimeout(gone, timeoutMs);
      signal.addEventListener("abort", gone, { once: true });
      this.waiters.set(room, wake);
    });
  }

  /** Decode engines waiting now (bounded by `MAX_ROOMS`). */
  get waiting(): number {
    return this.waiters.size;
  }

  /** Prefilled rooms whose KV waits now (bounded by `MAX_ROOMS`). */
  get held(): number {
    return this.ready.size;
  }

  private expire(): void {
    const cutoff = this.nowMs() - ROOM_TTL_MS;
    for (const [room, r] of this.ready) {
      if (r.atMs >= cutoff) break;
      this.ready.delete(room);
    }
  }
}
