import { describe, expect, it } from "vitest";
import { fixtureFleet } from "../routing/routing.test-helper.ts";
import { InstanceTelemetry } from "../schemas/telemetry.ts";
import { attainment, sloLoad, total } from "./slo-attainment.ts";

const classes = fixtureFleet().classes; // every class: TTFT 200 ms, TBT 50 ms
const inst = (id: string, over: object) => InstanceTelemetry.parse({ id, state: "ready", waiting: 0, running: 1, kvUse: 0.1, ...over });

describe("sloLoad", () => {
  it("weighs each class's served load by whether its instance's p99s are within the class SLO", () => {
    const loads = sloLoad(
      [
        inst("fast", { servedRps: { SS: 3, SL: 1 }, ttftMs: { p50: 50, p99: 150 }, tbtMs: { p50: 10, p99: 40 } }),
        inst("slow-tbt", { servedRps: { SS: 1 }, ttftMs: { p50: 50, p99: 150 }, tbtMs: { p50: 30, p99: 60 } }),
        inst("prefill", { servedRps: { SL: 1 }, ttftMs: { p50: 50, p99: 190 } }),
        inst("silent", { servedRps: { SS: 10 } }),
      ],
      classes,
    );
    expect(loads.get("SS" as never)).toEqual({ judgedRps: 4, metRps: 3 });
    expect(loads.get("SL" as never)).toEqual({ judgedRps: 2, metRps: 2 });
    expect(attainment(total(loads.values()))).toBe(5 / 6);
    expect(attainment(total([]))).toBeNull();
  });
});
