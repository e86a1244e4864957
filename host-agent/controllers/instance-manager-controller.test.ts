import { describe, expect, it } from "vitest";
import { ProfileRow } from "../../src/core/schemas/profile.ts";
import { RequestLog } from "../telemetry/request-log.ts";
import { RequestTracker, type TrackedRequest } from "../telemetry/request-tracker.ts";
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
    expect([im.periodMs, im.watchPeriodMs]).toEqual([5000, undefined]);
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

  /** An instance manager with the emergency ladder, and requests that arrive at its instance `ageMs` ago. */
  async function withLadder() {
    const { clock, actuator } = await simulatedGpus(1);
    const log = new RequestLog();
    const requests = new RequestTracker({ nowMs: () => clock.ms, log });
    const { scope } = testScope(actuator, clock, { instanceId: "im", gpus: [0], bounds: { minMhz: 1005, maxMhz: 1980 } });
    // Prefill takes 100 ms a request at 1005 MHz and 50 ms at 1980 MHz; TTFT: SS 250 ms, LL 2 s, others 500 ms.
    const ttftMs = (c: string | undefined) => ({ SS: 250, LL: 2000 })[c as "SS"] ?? 500;
    const view = { requests, prefillMs: (_t: number, mhz: number) => (mhz >= 1980 ? 50 : 100), ttftMs, peers: () => [{ instance: "peer", spareMs: 500 }], squashAfterMs: 1000 };
    const im = new InstanceManagerController(scope, { requestLog: log, rows: async () => ROWS, sloOf: () => SLO, replicas: 1, emergency: view });
    const arrived: TrackedRequest[] = [];
    const arrive = (classId: string, ageMs: number, n = 1) =>
      Array.from({ length: n }, () => {
        clock.ms -= ageMs;
        const t = requests.begin(classId, "im", true);
        clock.ms += ageMs;
        arrived.push(t);
        return t;
      });
    return { im, requests, arrive, arrived };
  }

  it("climbs the emergency ladder when queued requests miss their TTFT: reorder, max clock, re-steer to a free peer, squash", async () => {
    const { im, requests, arrive, arrived } = await withLadder();
    // Two long requests queued before a short one: in arrival order the short one misses its 250 ms; shortest deadline first saves all.
    const [old] = arrive("LL", 420);
    const [mid] = arrive("LL", 300);
    const [short] = arrive("SS", 0);
    expect(requests.keepsQueue("im")).toBe(false);
    await im.tick();
    expect(im.decision).toMatchObject({ emergency: "reorder", mhz: 1005 });
    expect(requests.keepsQueue("im")).toBe(true);
    expect([short!.directive, old!.directive, mid!.directive]).toEqual([{ rank: 0 }, { rank: 1 }, { rank: 2 }]);
    // Eight more: no order saves every deadline at 1005 MHz; the max clock does (50 ms each).
    arrive("MM", 0, 8);
    await im.tick();
    expect(im.decision).toMatchObject({ emergency: "max-clock", mhz: 1980 });
    expect(im.mhz).toBe(1980);
    // Still backlogged at the max clock next time: the five that would still miss (past 500 ms) go to the free peer.
    const late = arrive("MM", 0, 6);
    await im.tick();
    expect(im.decision!.emergency).toBe("re-steer");
    expect(late.map((t) => t.directive?.resteerTo)).toEqual([undefined, ...Array(5).fill("peer")]);
    // Twelve that waited past the squash threshold: the peer takes ten (its 500 ms of room), the other two are squashed.
    const stale = arrive("MM", 1100, 12);
    await im.tick();
    expect(im.decision!.emergency).toBe("squash");
    expect(stale.filter((t) => t.directive?.resteerTo === "peer")).toHaveLength(10);
    expect(stale.filter((t) => t.directive?.squash)).toHaveLength(2);
    // While a rung stands the site gateway keeps the instance's queue; once every request is served it stands down.
    expect(requests.keepsQueue("im")).toBe(true);
    for (const t of arrived) requests.drop(t);
    await im.tick();
    expect(im.decision!.emergency).toBe("none");
    expect(requests.keepsQueue("im")).toBe(false);
  });

  it("starts the ladder between decisions as soon as a queue builds up, on its first rungs; climbing further waits for the next decision", async () => {
    const { im, requests, arrive } = await withLadder();
    expect(im.watchPeriodMs).toBe(1000);
    await im.tick();
    await im.watch();
    expect([im.decision!.emergency, requests.keepsQueue("im")]).toEqual(["none", false]);
    // A short request behind two long ones would miss its 250 ms: reordering saves it, at once.
    const [old] = arrive("LL", 420);
    arrive("LL", 300);
    const [short] = arrive("SS", 0);
    await im.watch();
    expect([im.decision!.emergency, requests.keepsQueue("im")]).toEqual(["reorder", true]);
    expect([short!.directive, old!.directive]).toEqual([{ rank: 0 }, { rank: 1 }]);
    // Twenty more that no order saves at 1005 MHz: the watch leaves the climb to the decision.
    arrive("MM", 0, 20);
    await im.watch();
    expect([im.decision!.emergency, im.mhz]).toEqual(["reorder", 1005]);
    await im.tick();
    expect([im.decision!.emergency, im.mhz]).toEqual(["max-clock", 1980]);
  });

  it("does not lock while its plan is being replaced", async () => {
    const { gpus, im, state, epoch } = await setup();
    state.current = false;
    await epoch(1);
    expect(im.decision!.mhz).toBe(1005);
    expect(gpus.lockOf(0)).toBeNull();
  });
});
