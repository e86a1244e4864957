import { describe, expect, it } from "vitest";
import { exponential, seededRng } from "../../src/core/ports/rng.ts";
import { EnergyMeter } from "./energy-meter.ts";

/** An engine stepped by hand: each step's energy (busy power x its time + its tokens' energy) is shared by its requests by their tokens' energy. */
const COSTS = { busyW: 180, idleW: 60, prefillJ: 0.01, decodeJ: 0.25, kvJPerK: 0.08 };

interface Req {
  prompt: number;
  output: number;
  generated: number;
  truthJ: number;
  arrivalMs: number;
  metered?: ReturnType<EnergyMeter["begin"]>;
  measuredJ?: number;
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

async function runSteps(meter: EnergyMeter, clock: { ms: number }, counter: { j: number }, requests: Req[]): Promise<void> {
  const waiting: Req[] = [];
  let batch: Req[] = [];
  let next = 0;
  let done = 0;
  while (done < requests.length) {
    while (next < requests.length && requests[next]!.arrivalMs <= clock.ms) {
      const r = requests[next++]!;
      r.metered = meter.begin([0], r.prompt, true);
      waiting.push(r);
      await turn();
    }
    batch.push(...waiting.splice(0));
    const stepMs = batch.length === 0 ? 10 : 10 + 0.02 * batch.reduce((n, r) => n + (r.generated === 0 ? r.prompt : 0), 0);
    clock.ms += stepMs;
    if (batch.length === 0) {
      counter.j += (COSTS.idleW * stepMs) / 1e3;
      continue;
    }
    const own = batch.map((r) => (r.generated === 0 ? COSTS.prefillJ * r.prompt : COSTS.decodeJ + (COSTS.kvJPerK * (r.prompt + r.generated)) / 1000));
    const dynamic = own.reduce((a, b) => a + b, 0);
    const energy = (COSTS.busyW * stepMs) / 1e3 + dynamic;
    counter.j += energy;
    batch.forEach((r, i) => (r.truthJ += (energy * own[i]!) / dynamic));
    for (const r of batch) {
      r.generated++;
      r.metered!.token();
    }
    const finished = batch.filter((r) => r.generated >= r.output);
    batch = batch.filter((r) => r.generated < r.output);
    await Promise.all(finished.map(async (r) => void (r.measuredJ = (await r.metered!.finish(r.output))?.energyJ)));
    done += finished.length;
    await turn(); // the gateway's I/O between steps

  }
}

describe("EnergyMeter", () => {
  it("gives each request its true share of the measured energy under mixed load, once its energy model is fitted", async () => {
    const clock = { ms: 0 };
    const counter = { j: 0 };
    const meter = new EnergyMeter({ energyJ: async () => counter.j, nowMs: () => clock.ms, sampleMs: 200 });
    meter.stop();
    const rng = seededRng(5);
    const logUniform = (lo: number, hi: number) => Math.floor(Math.exp(Math.log(lo) + rng.next() * (Math.log(hi) - Math.log(lo))));
    let t = 0;
    const requests: Req[] = Array.from({ length: 150 }, () => ({ prompt: logUniform(20, 3000), output: logUniform(4, 200), generated: 0, truthJ: 0, arrivalMs: (t += exponential(rng, 8) * 1e3) }));
    await runSteps(meter, clock, counter, requests);
    const scored = requests.slice(20);
    const errors = scored.map((r) => Math.abs(r.measuredJ! - r.truthJ) / r.truthJ);
    expect(Math.max(...errors)).toBeLessThan(1e-6);
    expect(meter.weightsOf([0])).toMatchObject({ busyW: expect.closeTo(180, 3), idleW: expect.closeTo(60, 3), prefill: expect.closeTo(0.01, 6), decode: expect.closeTo(0.25, 6), decodeKvK: expect.closeTo(0.08, 5) });
  });

  it("charges idle energy to no request, says an unstreamed answer's share is estimated, and gives no receipt when a reading fails", async () => {
    const clock = { ms: 0 };
    const counter = { j: 1000 };
    let failing = false;
    const meter = new EnergyMeter({ energyJ: async () => (failing ? Promise.reject(new Error("GPU lost")) : counter.j), nowMs: () => clock.ms });
    meter.stop();
    const a = meter.begin([1], 100, true);
    const plain = meter.begin([1], 100, false);
    await turn();
    clock.ms += 50;
    counter.j += 30;
    a.token();
    const [ra, rp] = await Promise.all([a.finish(1), plain.finish(1)]);
    expect(ra!.source).toBe("measured");
    expect(rp!.source).toBe("estimated");
    expect(ra!.energyJ + rp!.energyJ).toBeCloseTo(30, 9);
    clock.ms += 5000;
    counter.j += 300; // idle: no one's
    const b = meter.begin([1], 10, true);
    await turn();
    clock.ms += 20;
    counter.j += 4;
    b.token();
    expect((await b.finish(1))!.energyJ).toBeCloseTo(4, 9);
    const c = meter.begin([1], 10, true);
    await turn();
    clock.ms += 20;
    c.token();
    failing = true;
    expect(await c.finish(1)).toBeUndefined();
  });
});
