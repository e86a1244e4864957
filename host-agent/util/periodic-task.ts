import { backoffMs, Wakeup, type Backoff } from "./backoff.ts";

/**
 * Runs `attempt` every `intervalMs` until stopped; after failed attempts (it returns false) it waits
 * longer, with exponential backoff, never less than the interval. `stop()` wakes a waiting loop
 * and resolves when the attempt in progress has finished.
 */
export class PeriodicTask {
  private failures = 0;
  private stopped = true;
  private readonly wakeup = new Wakeup();
  private loop: Promise<void> = Promise.resolve();

  constructor(private readonly o: { intervalMs: number; backoff: Backoff; attempt: () => Promise<boolean> }) {}

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wakeup.wake();
    await this.loop;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      this.failures = (await this.o.attempt()) ? 0 : this.failures + 1;
      const delay = this.failures === 0 ? this.o.intervalMs : Math.max(this.o.intervalMs, backoffMs(this.o.backoff, this.failures));
      if (!this.stopped) await this.wakeup.wait(delay);
    }
  }
}
