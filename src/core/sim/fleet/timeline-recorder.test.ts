import { describe, expect, it } from "vitest";
import { TimelineRecorder } from "./timeline-recorder.ts";

describe("TimelineRecorder", () => {
  it("records per site the mean over the window's samples, and served and dropped per second, then starts a new window", () => {
    const r = new TimelineRecorder(["a", "b"]);
    r.site("a", 100, 200, 10);
    r.endSample();
    r.site("a", 300, 200, 30);
    r.served(8);
    r.dropped(2);
    r.endSample();
    r.record(2);
    expect(r.timeline.tS).toEqual([2]);
    expect(r.timeline.sites.a).toEqual({ drawW: [200], availableW: [200], carbonGPerKwh: [20] });
    expect(r.timeline.sites.b).toEqual({ drawW: [0], availableW: [0], carbonGPerKwh: [0] });
    expect(r.timeline.servedRps).toEqual([4]);
    expect(r.timeline.droppedRps).toEqual([1]);
    r.served(30);
    r.endSample();
    r.record(12, 10);
    expect(r.timeline.servedRps).toEqual([4, 3]);
    expect(r.timeline.sites.a!.drawW).toEqual([200, 0]);
  });
});
