/** Rooms a simulated prefill engine keeps KV in, and decode engines it keeps waiting, at most. */
export const MAX_ROOMS = 4096;

/** How long a prefilled room's KV waits for its decode engine before it is dropped, ms (vLLM's NIXL lease, SGLang's bootstrap timeout, are of this order). */
export const ROOM_TTL_MS = 60_000;

interface Kept {
  promptTokens: number;
  /** Gives the KV's room in the cache back. */
  release(): void;
  expiry: NodeJS.Timeout;
}

/**
 * The KV a simulated prefill engine keeps for decode engines, by room number (SGLang's bootstrap
 * room; for vLLM's handoff the number the engine gives as its block id), and the decode engines
 * waiting for a room not yet prefilled (SGLang sends both engines the request at once, so either
 * may come first). A decode engine takes a room's KV once, and the prefill engine then gives its
 * room in the cache back, as it does when no decode engine came within `ROOM_TTL_MS`. Both lists are
 * bounded: past `MAX_ROOMS` the oldest kept room is dropped, and a further waiter is refused.
 *
 * @example
 * const rooms = new KvRooms();
 * const tokens = rooms.wait(7, 30_000, signal); // a decode engine asks first
 * rooms.prefilled(7, 1200, release); // tokens resolves to 1200, release() is called
 */
export class KvRooms {
  private readonly kept = new Map<number, Kept>();
  /** Room -> how to wake the decode engine waiting in it (one per room). */
  private readonly waiters = new Map<number, (promptTokens: number | undefined) => void>();

  constructor(private readonly ttlMs = ROOM_TTL_MS) {}

  /** The request in `room` is prefilled: its waiting decode engine (if any) takes the KV, else it is kept for one. */
  prefilled(room: number, promptTokens: number, release: () => void = () => {}): void {
    const waiter = this.waiters.get(room);
    if (waiter) {
      release();
      return waiter(promptTokens);
    }
    this.drop(room);
    if (this.kept.size >= MAX_ROOMS) this.drop(this.kept.keys().next().value!);
    const expiry = setTimeout(() => this.drop(room), this.ttlMs);
    expiry.unref();
    this.kept.set(room, { promptTokens, release, expiry });
  }

  /**
   * The prompt tokens whose KV `room` holds, once prefilled; undefined when it is not within
   * `timeoutMs`, when `signal` aborts, or when a decode engine waits there already or too many do.
   */
  wait(room: number, timeoutMs: number, signal: AbortSignal): Promise<number | undefined> {
    const got = this.kept.get(room);
    if (got) {
      this.drop(room);
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

  /** Rooms whose KV is kept now (bounded by `MAX_ROOMS`). */
  get held(): number {
    return this.kept.size;
  }

  /** Gives every kept room's KV back (the engine stops). */
  clear(): void {
    for (const room of [...this.kept.keys()]) this.drop(room);
  }

  private drop(room: number): void {
    const kept = this.kept.get(room);
    if (!kept) return;
    clearTimeout(kept.expiry);
    this.kept.delete(room);
    kept.release();
  }
}
