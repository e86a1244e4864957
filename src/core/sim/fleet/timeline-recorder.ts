import type { FleetTimeline } from "./fleet-result.ts";

/**
 * The fleet timeline as both simulators sample it: per site the mean draw, available power and
 * carbon intensity over the samples (steps or seconds) since the last point, and requests served
 * and dropped per second.
 */
export class TimelineRecorder {
  readonly timeline: FleetTimeline;
  private window = emptyWindow();

  constructor(private readonly siteIds: readonly string[]) {
    this.timeline = { tS: [], sites: Object.fromEntries(siteIds.map((id) => [id, { availableW: [], drawW: [], carbonGPerKwh: [] }])), servedRps: [], droppedRps: [] };
  }

  /** One sample of a site's power and carbon. */
  site(siteId: string, drawW: number, availableW: number, carbonGPerKwh: number): void {
    const w = this.window;
    w.drawW.set(siteId, (w.drawW.get(siteId) ?? 0) + drawW);
    w.availableW.set(siteId, (w.availableW.get(siteId) ?? 0) + availableW);
    w.carbon.set(siteId, (w.carbon.get(siteId) ?? 0) + carbonGPerKwh);
  }

  served(n: number): void {
    this.window.served += n;
  }

  dropped(n: number): void {
    this.window.dropped += n;
  }

  /** Closes one sample (a step or a second) of the window. */
  endSample(): void {
    this.window.samples++;
  }

  /** Records the point at `tS` and starts a new window; served and dropped per second over `seconds` (the window's samples unless given). */
  record(tS: number, seconds?: number): void {
    const w = this.window;
    const n = Math.max(1, w.samples);
    this.timeline.tS.push(tS);
    for (const id of this.siteIds) {
      const series = this.timeline.sites[id]!;
      series.drawW.push((w.drawW.get(id) ?? 0) / n);
      series.availableW.push((w.availableW.get(id) ?? 0) / n);
      series.carbonGPerKwh.push((w.carbon.get(id) ?? 0) / n);
    }
    const per = seconds ?? n;
    this.timeline.servedRps.push(w.served / per);
    this.timeline.droppedRps.push(w.dropped / per);
    this.window = emptyWindow();
  }
}

function emptyWindow() {
  return { drawW: new Map<string, number>(), availableW: new Map<string, number>(), carbon: new Map<string, number>(), served: 0, dropped: 0, samples: 0 };
}
