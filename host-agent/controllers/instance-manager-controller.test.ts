import { describe, expect, it } from "vitest";
import { ProfileRow } from "../../src/core/schemas/profile.ts";
import { RequestLog } from "../telemetry/request-log.ts";
import { served, simulatedGpus, testScope } from "./controllers.test-helper.ts";
import { InstanceManagerController } from "./instance-manager-controller.ts";

const SLO = { ttftMs: 500, tbtMs: 50 };
const LOADS = [1, 2, 4, 8];
/** Per clock, p99 TBT (ms) and average power (W) at each load of LOADS. At 4 req/s, 1590 MHz draws less than 1395 MHz. */
const CURVES: Record<number, [number, number][]> = {
  1005: [[30, 200], [45, 220], [70, 250], [120, 280]],
  1395: [[25, 260], [35, 280], [48, 330], [90, 380]],
  1590: [[22, 300], [30, 320], [40, 310], [70, 420]],
  1980: [[20, 380], [26, 400], [35, 450], [60, 500]],
};
const ROWS = Object.entries(CURVES).flatMap(([mhz, points]) =>
  points.map(([tbt, power], i) =>
    ProfileRow.parse({
      model: "llama3.1-8b",
      gpu: "H100-80GB",
      tp: 1,
      mhz: Number(mhz),
      classId: "MM",
      loadRps: LOADS[i],
      ttftMs: { p50: 100, p99: 200 },
      tbtMs: { p50: tbt / 2, p99: tbt },
      e2eMs: { p50: 5000, p99: 9000 },
      peakPowerW: power * 1.3,
      avgPowerW: power,
      energyPerRequestJ: power / LOADS[i]!,
      stable: true,
    }),
  ),
);

async function setup(bounds = { minMhz: 1005, maxMhz: 1980 }, replicas = 1) {
  const { clock, gpus, actuator } = await simulatedGpus(2);
  const log = new RequestLog();
  const { scope, state } = testScope(actuator, clock, { instanceId: "im", gpus: [0, 1].slice(0, replicas), bounds });
  const im = new InstanceManagerController(scope, { requestLog: log, rows: async () => ROWS, sloOf: () => SLO, replicas });
  /** `rps` requests per second finish over the next 5 s, then the manager decides. */
  const epoch = async (rps: number) => {
    for (let i = 0; i < rps * 5; i++) log.record(served("im", clock.ms + ((i + 0.5) * 5000) / (rps * 5), 150, 20));
    clock.ms += 5000;
    await im.tick();
  };
  return { gpus, im, state, epoch };
}

describe("InstanceManagerController (DynamoLLM's 5 s instance manager on the simulated GPUs)", () => {
  it("locks the lowest-energy clock whose p99 latencies meet the SLO at the load of the last 5 s", async () => {
    const { gpus, im, epoch } = await setup();
    expect(im.periodMs).toBe(5000);
    await epoch(1);
    expect(im.decision).toMatchObject({ mhz: 1005, meetsSlo: true, classId: "MM", loadRps: 1, powerW: 200 });
    expect(gpus.lockOf(0)).toEqual({ minMhz: 1005, maxMhz: 1005 });
    // 3 req/s: 1005 MHz breaks the TBT SLO (57.5 ms interpolated); 1395 MHz meets it at the least power.
    await epoch(3);
    expect(im.decision).toMatchObject({ mhz: 1395, meetsSlo: true, loadRps: 3 });
    expect(im.decision!.powerW).toBeCloseTo(305);
    // 4 req/s: 1590 MHz meets it at less power than 1395 MHz, so least energy is not the lowest clock.
    await epoch(4);
    expect(im.decision).toMatchObject({ mhz: 1590, meetsSlo: true, powerW: 310 });
    expect(gpus.lockOf(0)).toEqual({ minMhz: 1590, maxMhz: 1590 });
    await epoch(1);
    expect(im.mhz).toBe(1005);
  });

  it("runs at the fastest clock of the plan's bounds when none meets the SLO", async () => {
    const { gpus, im, epoch } = await setup({ minMhz: 1005, maxMhz: 1590 });
    await epoch(8);
    expect(im.decision).toMatchObject({ mhz: 1590, meetsSlo: false });
    expect(gpus.lockOf(0)).toEqual({ minMhz: 1590, maxMhz: 1590 });
    await epoch(4);
    expect(im.decision).toMatchObject({ mhz: 1590, meetsSlo: true });
  });

  it("counts the load per replica", async () => {
    const { im, epoch } = await setup(undefined, 2);
    await epoch(6);
    expect(im.decision).toMatchObject({ mhz: 1395, loadRps: 3 });
  });

  it("does not lock while its plan is being replaced", async () => {
    const { gpus, im, state, epoch } = await setup();
    state.current = false;
    await epoch(1);
    expect(im.decision!.mhz).toBe(1005);
    expect(gpus.lockOf(0)).toBeNull();
  });
});
