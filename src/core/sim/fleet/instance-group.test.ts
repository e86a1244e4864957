import { describe, expect, it } from "vitest";
import { gpuSpecs } from "../../model/gpu-specs.ts";
import { metricAtLoad } from "../../profiling/profile-lookup.ts";
import type { ClassId } from "../../schemas/ids.ts";
import { row } from "../../planning/planning.test-helper.ts";
import { InstanceGroup } from "./instance-group.ts";
import { powerBelowFirstPoint } from "./low-load-power.ts";
import { ProfileIndex } from "./profile-index.ts";

const gpu = gpuSpecs["H100-80GB"];
// Two classes on TP8 at the top clock: SS busy at low load (decode keeps the GPUs drawing), LL heavier per request.
const point = (classId: string, loadRps: number, avgPowerW: number) => ({ ...row({ classId, loadRps, e2eMs: 1000, peakPowerW: avgPowerW }), avgPowerW });
const rows = [point("SS", 1, 3000), point("SS", 4, 4000), point("LL", 0.2, 3500), point("LL", 1, 5000)];
const group = (count: number) => new InstanceGroup("a", 8, 1980, count, 0, gpu, new ProfileIndex(rows), ["SS", "LL"] as ClassId[]);
const idle = 8 * gpu.power.idleW;
const curve = (c: string) => rows.filter((r) => r.classId === c);

describe("InstanceGroup.powerW", () => {
  it("one class: its profiled draw at the load per instance, and the busy chance below the first point", () => {
    const g = group(2);
    g.load.set("SS" as ClassId, 5);
    expect(g.powerW()).toBeCloseTo(2 * metricAtLoad(curve("SS"), 2.5, (r) => r.avgPowerW), 6);
    g.load.set("SS" as ClassId, 1);
    expect(g.powerW()).toBeCloseTo(2 * powerBelowFirstPoint(idle, curve("SS")[0]!, 0.5), 6);
    expect(g.powerW()).toBeGreaterThan(2 * (idle + (3000 - idle) * 0.5));
  });

  it("several classes: each curve at the total utilisation, weighted by its share, so the draw never exceeds the busiest class's", () => {
    const g = group(1);
    g.load.set("SS" as ClassId, 2); // half of SS's capacity
    g.load.set("LL" as ClassId, 0.5); // half of LL's capacity: the instance is fully busy
    expect(g.utilisation()).toBeCloseTo(1, 9);
    expect(g.powerW()).toBeCloseTo(0.5 * 4000 + 0.5 * 5000, 6);
    expect(g.powerW()).toBeLessThanOrEqual(5000);
  });
});
