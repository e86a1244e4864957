/** Most sites one isolate remembers as failing (more than any fleet has; a bound on memory all the same). */
const MAX_SITES = 1024;
/** A site that keeps failing its probes is held at most this many times the base hold. */
const MAX_BACKOFF = 16;

interface Hold {
  /** Until when routing passes the site over. */
  untilMs: number;
  holdMs: number;
  /** Whether a request was let through since the hold ended (its failure doubles the hold). */
  probed: boolean;
}

/**
 * Sites that failed a request in this isolate (no answer, an error before the first byte, or a
 * failure after the head): routing passes them over for `holdMs` while another site can serve,
 * so a dead, stalled or signature-refusing site stops taking requests at once rather than at its
 * heartbeat timeout. When the hold ends one request is let through as a probe and the site stays
 * passed over until it ends: served, the site is back; failed, it is held twice as long (at most
 * 16 times), so a site that stays broken costs ever fewer requests. A probe that
 * never ends stops counting after another `holdMs`. Each isolate learns on its own; ControlDO's
 * health still takes a silent site out everywhere.
 *
 * @example
 * failing.failed("wind-a", now, 10_000); failing.avoided(now); // Set { "wind-a" }
 */
export class FailingSites {
  private readonly holds = new Map<string, Hold>();

  /** The sites to pass over at `nowMs`. */
  avoided(nowMs: number): Set<string> {
    const out = new Set<string>();
    for (const [site, h] of this.holds) if (nowMs < h.untilMs) out.add(site);
    return out;
  }

  /** A request was routed to `site`: if its hold has ended, this request is its probe, and the site is held while it runs. */
  routed(site: string, nowMs: number): void {
    const h = this.holds.get(site);
    if (!h || nowMs < h.untilMs) return;
    h.untilMs = nowMs + h.holdMs;
    h.probed = true;
  }

  /** `site` failed a request: held for `holdMs`; when a probe failed, for twice the last hold (up to 16 x `holdMs`). Failures within one hold (requests already in flight) do not lengthen it. */
  failed(site: string, nowMs: number, holdMs: number): void {
    const last = this.holds.get(site);
    const hold = !last ? holdMs : last.probed ? Math.min(last.holdMs * 2, holdMs * MAX_BACKOFF) : last.holdMs;
    this.holds.delete(site);
    if (this.holds.size >= MAX_SITES) this.holds.delete(this.holds.keys().next().value!);
    this.holds.set(site, { untilMs: nowMs + hold, holdMs: hold, probed: false });
  }

  /** A request at `site` was served whole: the site routes as before. */
  served(site: string): void {
    this.holds.delete(site);
  }
}
