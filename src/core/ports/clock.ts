/** Time as the core sees it: milliseconds since the Unix epoch, supplied by the host. */
export interface Clock {
  now(): number;
}

/** A clock that only moves when told to; the simulator and tests drive it. */
export class VirtualClock implements Clock {
  constructor(private ms = 0) {}
  now(): number {
    return this.ms;
  }
  advanceTo(ms: number): void {
    if (ms < this.ms) throw new Error(`VirtualClock cannot go back from ${this.ms} to ${ms}`);
    this.ms = ms;
  }
  advanceBy(ms: number): void {
    this.advanceTo(this.ms + ms);
  }
}
