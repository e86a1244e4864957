import { launchKey, type Engine } from "../engines/engine.ts";
import { AdmissionPacer } from "./admission-pacer.ts";

export interface EngineQueueGaugesOptions {
  engines(): Iterable<Engine>;
  /** Whether anyone needs the reads now (the plan's balance is join-idle, or the emergency ladder keeps a queue at the gateway); no engine is read otherwise. */
  wanted(): boolean;
  /** How often the engines are read while wanted, ms. */
  periodMs: number;
}

/**
 * The requests each engine has waiting for admission, as its metrics last said (vLLM's and
 * SGLang's queue gauges, the simulated engine's alike), read every `periodMs` while wanted, so the
 * gateway can tell which replicas have a queue without a call per request. A replica the gateway
 * has just sent a request to counts as unknown until a read that began after it: a read of 0 says
 * nothing of what was sent after it, and one stale read must not draw a whole burst to one
 * replica. A failed read the engine answers with its last good reading (`Engine.load`'s hold)
 * changes nothing here; one it cannot makes the replica unknown. Each engine is read on its own, so
 * one whose metrics hang holds no other's reads; it counts as unknown once its read is a period
 * overdue. The same reads pace what the gateway sends each engine to what it admits (`credit`,
 * `AdmissionPacer`); a replica whose queue is unknown gets no credit until a read answers.
 *
 * @example
 * const gauges = new EngineQueueGauges({ engines: () => view.engines(), wanted: () => true, periodMs: 250 });
 * gauges.start();
 * gauges.waiting(engine); // 0, 3, or undefined before its first read
 */
export class EngineQueueGauges {
  private readonly read = new Map<string, number>();
  private readonly pacer = new AdmissionPacer();
  /** Engines whose read has not answered yet. */
  private readonly reading = new Set<string>();
  /** Engines sent a request while their read was under way: a read of none from it is stale. */
  private readonly sentDuringRead = new Set<string>();
  private timer: NodeJS.Timeout | undefined;

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

  /**
   * Reads every accepting engine whose last read has answered; one still unanswered becomes
   * unknown, as does one whose read fails past the engine's hold, or that no longer takes
   * requests. Resolves when this round's reads have answered.
   */
  async refresh(): Promise<void> {
    if (!this.o.wanted()) {
      this.read.clear();
      this.pacer.clear();
      return;
    }
    const engines = [...this.o.engines()].filter((e) => e.accepting && e.state === "ready");
    const keys = new Set(engines.map((e) => launchKey(e.launch)));
    for (const key of [...this.read.keys()]) if (!keys.has(key)) this.read.delete(key);
    for (const key of this.pacer.keys()) if (!keys.has(key)) this.pacer.forget(key);
    await Promise.all(engines.map((e) => this.readOne(e)));
  }

  private async readOne(engine: Engine): Promise<void> {
    const key = launchKey(engine.launch);
    if (this.reading.has(key)) {
      this.read.delete(key);
      this.pacer.blind(key);
      return;
    }
    this.reading.add(key);
    this.pacer.readBegins(key);
    try {
      const load = await engine.load().catch(() => undefined);
      if (load?.heldMs !== undefined) {
        // The read failed, and the engine stands on its last good one: what was read from that stands too.
        this.pacer.readFailed(key);
        return;
      }
      if (load === undefined) {
        this.pacer.readFailed(key);
        this.pacer.blind(key);
      } else this.pacer.readEnds(key, load.waiting);
      const stale = this.sentDuringRead.has(key) && load?.waiting === 0;
      if (load === undefined || stale) this.read.delete(key);
      else this.read.set(key, load.waiting);
    } finally {
      this.reading.delete(key);
      this.sentDuringRead.delete(key);
    }
  }

  /** Requests waiting at `engine` as last read; undefined before its first read, after a failed (past the engine's hold) or overdue one, or once a read of none was sent more. */
  waiting(engine: Engine): number | undefined {
    return this.read.get(launchKey(engine.launch));
  }

  /** Requests `engine` may still be sent before its next read, at the pace it admits them (none while its queue is unknown); undefined when not paced (see `AdmissionPacer`). */
  credit(engine: Engine): number | undefined {
    return this.pacer.credit(launchKey(engine.launch));
  }

  /** The gateway sent `engine` a request: a read of none waiting no longer stands (one of some still does). */
  sent(engine: Engine): void {
    const key = launchKey(engine.launch);
    this.pacer.sent(key);
    if (this.reading.has(key)) this.sentDuringRead.add(key);
    if (this.read.get(key) === 0) this.read.delete(key);
  }
}
