import { launchKey, type Engine } from "../engines/engine.ts";

export interface EngineQueueGaugesOptions {
  engines(): Iterable<Engine>;
  /** Whether anyone needs the reads now (the plan's balance is join-idle); no engine is read otherwise. */
  wanted(): boolean;
  /** How often the engines are read while wanted, ms. */
  periodMs: number;
}

/**
 * The requests each engine has waiting for admission, as its metrics last said (vLLM's and
 * SGLang's queue gauges, the simulated engine's alike), read every `periodMs` while wanted, so the
 * gateway can tell which replicas have a queue without a call per request. A replica the gateway
 * has just sent a request to counts as unknown until the next read: a read of 0 says nothing of
 * what was sent after it, and one stale read must not draw a whole burst to one replica.
 *
 * @example
 * const gauges = new EngineQueueGauges({ engines: () => view.engines(), wanted: () => true, periodMs: 250 });
 * gauges.start();
 * gauges.waiting(engine); // 0, 3, or undefined before its first read
 */
export class EngineQueueGauges {
  private readonly read = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private reading = false;

  constructor(private readonly o: EngineQueueGaugesOptions) {}

  /** Reads now, then every `periodMs`. */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.refresh(), this.o.periodMs).unref();
    void this.refresh();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Reads every accepting engine once (one read at a time; an engine that does not answer becomes unknown). */
  async refresh(): Promise<void> {
    if (this.reading || !this.o.wanted()) return;
    this.reading = true;
    try {
      const engines = [...this.o.engines()].filter((e) => e.accepting && e.state === "ready");
      const loads = await Promise.all(engines.map((e) => e.load().then((l) => l.waiting, () => undefined)));
      this.read.clear();
      engines.forEach((e, i) => loads[i] !== undefined && this.read.set(launchKey(e.launch), loads[i]));
    } finally {
      this.reading = false;
    }
  }

  /** Requests waiting at `engine` as last read; undefined before its first read, after a failed one, or once a read of none was sent more. */
  waiting(engine: Engine): number | undefined {
    return this.read.get(launchKey(engine.launch));
  }

  /** The gateway sent `engine` a request: a read of none waiting no longer stands (one of some still does). */
  sent(engine: Engine): void {
    const key = launchKey(engine.launch);
    if (this.read.get(key) === 0) this.read.delete(key);
  }
}
