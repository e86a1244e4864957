/**
 * A site's admission share under its power envelope. Each second the site's measured draw is
 * compared with what it had: over it, the share of arriving requests the site takes is cut by
 * how far the draw above its idle floor overshot (draw above idle is about linear in load, as the
 * fluid simulator cuts load); under it, the share recovers by `recovery` a second. Requests the
 * site does not take go to another site or are dropped: the per-request counterpart of the fluid
 * simulator's load cut. Draw lags admission (queued work still runs), so a second may overshoot.
 */
export class PowerGovernor {
  share = 1;

  constructor(private readonly recovery = 0.05) {}

  /** Updates the share from one second's draw; returns true when the draw was over the envelope. */
  observe(drawW: number, availableW: number, floorW: number): boolean {
    if (drawW > availableW) {
      const keep = drawW > floorW ? Math.max(0, Math.min(1, (availableW - floorW) / (drawW - floorW))) : 0;
      this.share *= keep;
      return true;
    }
    this.share = Math.min(1, this.share + this.recovery);
    return false;
  }

  /** Whether the site takes a request (`u` uniform in [0, 1)). */
  admits(u: number): boolean {
    return u < this.share;
  }
}
