/**
 * A simulated site's clock: simulated time runs `speed` times as fast as the wall clock, from the
 * wall time the clock was made. GPU energy counters, engine iterations and request latencies of a
 * simulated site all read it, so they stay consistent at any speed.
 *
 * @example
 * const clock = new SimClock(10); // 10 simulated seconds per wall second
 * clock.nowS(); // simulated seconds since start
 * clock.wallMsFor(0.5); // 50: wall ms that 0.5 simulated seconds take
 */
export class SimClock {
  private readonly startWallMs: number;

  constructor(
    readonly speed = 1,
    private readonly wallNow: () => number = () => performance.now(),
    private readonly startEpochMs = Date.now(),
  ) {
    if (!(speed > 0 && Number.isFinite(speed))) throw new Error(`speed must be a positive number, not ${speed}`);
    this.startWallMs = wallNow();
  }

  /** Simulated seconds since the clock was made. */
  nowS(): number {
    return ((this.wallNow() - this.startWallMs) * this.speed) / 1e3;
  }

  /** Simulated time as epoch milliseconds (equal to the wall clock at start, then `speed` times as fast). */
  nowMs(): number {
    return this.startEpochMs + this.nowS() * 1e3;
  }

  /** Wall milliseconds that `simS` simulated seconds take. */
  wallMsFor(simS: number): number {
    return (simS * 1e3) / this.speed;
  }
}
