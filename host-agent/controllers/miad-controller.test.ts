import { describe, expect, it } from "vitest";
import { RequestLog } from "../telemetry/request-log.ts";
import { RequestTracker } from "../telemetry/request-tracker.ts";
import { served, simulatedGpus, testScope } from "./controllers.test-helper.ts";
import { MiadInstanceController } from "./miad-controller.ts";

const SLO = { ttftMs: 300, tbtMs: 50, e2eMs: 5000 };
/** Class LL's requests are held to a longer E2E, as FREESH holds its long types (Table 7). */
const sloOf = (classId: string | undefined) => (classId === "LL" ? { ...SLO, ttftMs: 600, e2eMs: 30_000 } : SLO);
const BOUNDS = { minMhz: 1005, maxMhz: 1980 };

async function setup() {
  const { clock, gpus, actuator } = await simulatedGpus(4);
  const log = new RequestLog();
  const { scope, state } = testScope(actuator, clock, { instanceId: "m", gpus: [1, 2], bounds: BOUNDS });
  const requests = new RequestTracker({ nowMs: () => clock.ms, log });
  const miad = new MiadInstanceController(scope, { requestLog: log, inFlight: requests, sloOf });
  const second = async () => {
    clock.ms += 1000;
    await miad.tick();
  };
  return { clock, gpus, log, requests, miad, state, second };
}

describe("MiadInstanceController (FREESH MIAD on the simulated GPUs)", () => {
  it("steps down 100 MHz a quiet second, snapped to the GPU's 15 MHz grid, on every GPU of the instance", async () => {
    const { gpus, miad, second } = await setup();
    expect(miad.periodMs).toBe(1000);
    await second();
    expect(miad.breached).toBe(false);
    expect(miad.miad.mhz).toBe(1880);
    expect(miad.mhz).toBe(1875);
    expect([gpus.lockOf(1), gpus.lockOf(2), gpus.lockOf(0)]).toEqual([{ minMhz: 1875, maxMhz: 1875 }, { minMhz: 1875, maxMhz: 1875 }, null]);
    await second();
    expect(miad.mhz).toBe(1785);
    expect((await gpus.currentClocksMhz(1)).graphicsMhz).toBeLessThanOrEqual(1785);
  });

  it("never goes below the plan's lower bound while the SLO holds", async () => {
    const { gpus, log, clock, miad, second } = await setup();
    const seen: number[] = [];
    for (let s = 0; s < 15; s++) {
      log.record(served("m", clock.ms + 500, 100, 20));
      await second();
      seen.push(miad.mhz!);
    }
    expect(seen.every((f, i) => i === 0 || f <= seen[i - 1]!)).toBe(true);
    expect(seen.at(-1)).toBe(1005);
    expect(gpus.lockOf(1)).toEqual({ minMhz: 1005, maxMhz: 1005 });
  });

  it("doubles the clock (up to the upper bound) after a second with a TTFT or TBT over the SLO", async () => {
    const { log, clock, miad, second } = await setup();
    for (let s = 0; s < 6; s++) await second();
    expect(miad.mhz).toBe(1380);
    log.record(served("m", clock.ms + 400, 350, 20));
    await second();
    expect(miad.breached).toBe(true);
    expect(miad.miad.mhz).toBe(1980);
    expect(miad.mhz).toBe(1980);
    for (let s = 0; s < 9; s++) await second();
    expect(miad.mhz).toBe(1080);
    log.record(served("m", clock.ms + 100, 100, 60));
    await second();
    expect(miad.mhz).toBe(1980);
  });

  it("doubles the clock while a request in flight has waited past the TTFT SLO for its first token, before it ends", async () => {
    const { clock, requests, miad, second } = await setup();
    for (let s = 0; s < 6; s++) await second();
    expect(miad.mhz).toBe(1380);
    const late = requests.begin("MM", "m", true);
    clock.ms += 100;
    await second(); // 1100 ms without a first token: a breach, though nothing has finished
    expect(miad.breached).toBe(true);
    expect(miad.mhz).toBe(1980);
    requests.placed(late, "m");
    requests.token(late);
    await second();
    expect(miad.breached).toBe(false);
    const other = requests.begin("MM", "other", true);
    await second();
    expect(miad.breached).toBe(false);
    requests.drop(other);
  });

  it("holds each request to its class's SLO, E2E included, finished or still running", async () => {
    const { clock, log, requests, miad, second } = await setup();
    for (let s = 0; s < 6; s++) await second();
    log.record(served("m", clock.ms + 500, 500, 40, "LL", 20_000)); // within LL's SLO
    await second();
    expect(miad.breached).toBe(false);
    log.record(served("m", clock.ms + 500, 100, 40, "MM", 6000)); // over MM's E2E
    await second();
    expect(miad.breached).toBe(true);
    const long = requests.begin("LL", "m", true);
    requests.placed(long, "m");
    requests.token(long);
    clock.ms += 20_000;
    await second();
    expect(miad.breached).toBe(false);
    clock.ms += 10_000; // now older than LL's 30 s
    await second();
    expect(miad.breached).toBe(true);
    requests.drop(long);
  });

  it("takes the p99 of a busy second: more than 1% of its requests over their SLO", async () => {
    const { clock, log, miad, second } = await setup();
    for (let k = 0; k < 200; k++) log.record(served("m", clock.ms + 1 + k, k < 2 ? 900 : 100, 20));
    await second();
    expect(miad.breached).toBe(false);
    for (let k = 0; k < 200; k++) log.record(served("m", clock.ms + 1 + k, k < 3 ? 900 : 100, 20));
    await second();
    expect(miad.breached).toBe(true);
  });

  it("reads only the last second of this instance's requests", async () => {
    const { log, clock, miad, second } = await setup();
    log.record(served("m", clock.ms - 500, 900, 90));
    log.record(served("other", clock.ms + 500, 900, 90));
    await second();
    expect(miad.breached).toBe(false);
    expect(miad.mhz).toBe(1875);
  });

  it("leaves the clocks alone while its plan is being replaced, and holds the lower bound while the power ladder does", async () => {
    const { gpus, miad, state, second } = await setup();
    await second();
    state.current = false;
    await second();
    expect(gpus.lockOf(1)).toEqual({ minMhz: 1875, maxMhz: 1875 });
    state.current = true;
    state.floor = true;
    await second();
    expect(gpus.lockOf(1)).toEqual({ minMhz: 1005, maxMhz: 1005 });
    expect(miad.miad.mhz).toBe(1780);
  });
});
