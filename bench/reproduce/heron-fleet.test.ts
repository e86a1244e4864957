import { describe, expect, it } from "vitest";
import { row } from "../../src/core/planning/planning.test-helper.ts";
import { perGpuCapacityRps } from "./heron-fleet.ts";

describe("perGpuCapacityRps", () => {
  // A: within its 1-s E2E SLO up to 4 req/s on a TP8 instance; B: over its SLO at every point, stable up to 2 req/s.
  const profile = [
    row({ classId: "A", loadRps: 2, e2eMs: 500, peakPowerW: 3000 }),
    row({ classId: "A", loadRps: 4, e2eMs: 900, peakPowerW: 4000 }),
    row({ classId: "A", loadRps: 8, e2eMs: 3000, peakPowerW: 5000 }),
    row({ classId: "B", loadRps: 1, e2eMs: 5000, peakPowerW: 3000 }),
    row({ classId: "B", loadRps: 2, e2eMs: 6000, peakPowerW: 4000 }),
    { ...row({ classId: "B", loadRps: 3, e2eMs: 9000, peakPowerW: 5000 }), stable: false },
  ];
  const slo = { A: { ttftMs: 1e9, tbtMs: 1e9, e2eMs: 1000 }, B: { ttftMs: 1e9, tbtMs: 1e9, e2eMs: 1000 } };

  it("counts each class at its highest load within its SLO, per GPU", () => {
    expect(perGpuCapacityRps(profile, slo, { A: 1 })).toBeCloseTo(4 / 8, 9);
  });

  it("counts a class no point serves within its SLO at its highest stable load, not as a class the GPUs cannot serve", () => {
    // Half the requests at 4/8 req/s per GPU, half at 2/8: 1 / (0.5 x 2 + 0.5 x 4) GPU-seconds.
    expect(perGpuCapacityRps(profile, slo, { A: 0.5, B: 0.5 })).toBeCloseTo(1 / 3, 9);
  });
});
