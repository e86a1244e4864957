import { afterEach, describe, expect, it } from "vitest";
import { llmSpec } from "../../src/core/model/llm-specs.ts";
import type { FrequencyController, IterationState } from "./frequency-controller.ts";
import { RealtimeEngine, SimRequestError, type SimRequestResult } from "./realtime-engine.ts";
import { SimulatedSite } from "./simulated-site.ts";

const engines: RealtimeEngine[] = [];
afterEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.close()));
});

async function setup(speed = 20) {
  const site = await SimulatedSite.open({ gpuType: "H100-80GB", gpuCount: 2, speed });
  const engine = new RealtimeEngine({ llm: llmSpec("llama3.1-8b"), tp: 1, site, gpus: [0] });
  engines.push(engine);
  return { site, engine };
}

function run(engine: RealtimeEngine, input: number, output: number) {
  const tokens: number[] = [];
  const result = new Promise<SimRequestResult>((resolve, reject) => engine.submit(input, output, { onTokens: (n) => tokens.push(n), onDone: resolve, onAbort: reject }));
  return { tokens, result };
}

describe("RealtimeEngine", () => {
  it("streams every output token in real time at the speed factor and charges each request its share", async () => {
    const { site, engine } = await setup(20);
    const t0 = performance.now();
    const a = run(engine, 200, 40);
    const b = run(engine, 200, 40);
    const c = run(engine, 800, 10);
    const [ra, rb, rc] = await Promise.all([a.result, b.result, c.result]);
    const wallMs = performance.now() - t0;
    expect(a.tokens.reduce((s, n) => s + n, 0)).toBe(40);
    expect(ra.completionTokens).toBe(40);
    expect(rc.completionTokens).toBe(10);
    expect(Math.min(ra.energyJ, rb.energyJ, rc.energyJ)).toBeGreaterThan(0);
    expect(wallMs).toBeGreaterThanOrEqual(site.clock.wallMsFor(ra.e2eS) * 0.8);
    expect(ra.e2eS).toBeGreaterThan(ra.ttftS);
    // Receipts add up to the engine's busy energy: all of it but the idle time.
    const receipts = ra.energyJ + rb.energyJ + rc.energyJ;
    expect(receipts).toBeLessThanOrEqual(engine.energyJ + 1e-6);
    const idleJ = site.spec.power.idleW * (Math.max(ra.e2eS, rc.e2eS) + 0.05);
    expect(engine.energyJ - receipts).toBeLessThan(idleJ);
    expect(engine.totals).toEqual({ promptTokens: 1200, generationTokens: 90, finished: 3 });
  });

  it("moves the simulated GPU's power and energy counters while it runs", async () => {
    const { site, engine } = await setup(2);
    const idleW = await site.gpus.powerUsageW(0);
    const e0 = await site.gpus.totalEnergyJ(0);
    const r = run(engine, 500, 60);
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect(await site.gpus.powerUsageW(0)).toBeGreaterThan(idleW);
    expect(await site.gpus.powerUsageW(1)).toBe(idleW);
    await r.result;
    expect(await site.gpus.totalEnergyJ(0)).toBeGreaterThan(e0);
    await expect.poll(() => site.gpus.powerUsageW(0), { timeout: 500, interval: 10 }).toBe(idleW);
  });

  it("runs at the GPUs' locked clock by default, and lets a controller pick and lock the clock each iteration", async () => {
    const { site, engine } = await setup(20);
    await site.gpus.lockGraphicsClocks(0, 990, 990);
    const slow = await run(engine, 100, 30).result;
    await site.gpus.resetGraphicsClocks(0);
    const fast = await run(engine, 100, 30).result;
    expect(slow.e2eS).toBeGreaterThan(fast.e2eS * 1.2);

    const seen: IterationState[] = [];
    const controller: FrequencyController = { chooseMhz: (state, bounds) => (seen.push(state), state.phase === "prefill" ? bounds.maxMhz : 1200) };
    engine.setClock({ mode: "policy", policy: "ecofreq", minMhz: 1005, maxMhz: 1590 }, controller);
    await run(engine, 100, 12).result;
    expect(seen.map((s) => s.phase)).toEqual(["prefill", ...Array(11).fill("decode")]);
    expect(site.gpus.lockOf(0)).toEqual({ minMhz: 1200, maxMhz: 1200 });
    expect(site.gpus.lockOf(1)).toBeNull();
  });

  it("refuses a request larger than the KV cache and aborts what is in flight on close", async () => {
    const { engine } = await setup(1);
    expect(() => engine.submit(engine.kvCapacity, 1, { onTokens: () => undefined, onDone: () => undefined, onAbort: () => undefined })).toThrow(SimRequestError);
    const pending = run(engine, 100, 10_000);
    await engine.close();
    await expect(pending.result).rejects.toMatch(/stopped/);
  });
});
