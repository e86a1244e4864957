import { describe, expect, it } from "vitest";
import { kvCapacityTokens } from "../../src/core/engine/kv-capacity.ts";
import { gpuSpec } from "../../src/core/model/gpu-specs.ts";
import { llmSpec } from "../../src/core/model/llm-specs.ts";
import type { IterationState } from "../sim-engine/frequency-controller.ts";
import { simulatedGpus, testScope } from "./controllers.test-helper.ts";
import { EcoFreqModels } from "../../src/core/planning/greenserve/eco-freq-models.ts";
import { EcoFreqIterationController, EcoFreqMetricsController } from "./ecofreq-controller.ts";

const llm = llmSpec("llama3.1-8b");
const h100 = gpuSpec("H100-80GB");
const BOUNDS = { minMhz: 1005, maxMhz: 1590 };
/** A 10 ms ITL SLO: one H100 decodes a small batch within it at the 1395 MHz sweet spot, 200 long sequences at no clock. */
const SLO = { ttftMs: 600, tbtMs: 10 };
const models = new EcoFreqModels();

const state = (s: Partial<IterationState>): IterationState => ({ nowS: 0, phase: "decode", waiting: 0, running: 0, batchTokens: 0, kvTokens: 0, currentMhz: 1590, maxWaitingS: 0, ...s });

describe("EcoFreqIterationController (per iteration, as simulated engines call it)", () => {
  it("runs a light decode batch at the sweet spot, a heavy one and a backlog at the top of the set", () => {
    let floor = false;
    const c = new EcoFreqIterationController(models.build(llm, h100, 1, BOUNDS, SLO), (b) => (floor ? { minMhz: b.minMhz, maxMhz: b.minMhz } : b));
    expect(c.chooseMhz(state({ running: 4, kvTokens: 2000 }), BOUNDS)).toBe(1395);
    expect(c.chooseMhz(state({ nowS: 0.01, running: 200, kvTokens: 150_000 }), BOUNDS)).toBe(1590);
    expect(c.chooseMhz(state({ nowS: 0.02, phase: "prefill", batchTokens: 300 }), BOUNDS)).toBe(1395);
    expect(c.chooseMhz(state({ nowS: 0.03, phase: "prefill", batchTokens: 300, waiting: 5 }), BOUNDS)).toBe(1590);
    expect(c.hook.decisions).toEqual([2, 2]);
    floor = true;
    expect(c.chooseMhz(state({ nowS: 0.04, phase: "prefill", batchTokens: 300, waiting: 5 }), BOUNDS)).toBe(1005);
    expect(c.hook.decisions).toEqual([2, 2]);
  });

  it("takes requests waiting in the site gateway's queue for its instance as waiting, though the engine has room", () => {
    let queued = 0;
    const c = new EcoFreqIterationController(models.build(llm, h100, 1, BOUNDS, SLO), (b) => b, { queued: () => queued });
    expect(c.chooseMhz(state({ running: 4, kvTokens: 2000 }), BOUNDS)).toBe(1395);
    queued = 2;
    expect(c.chooseMhz(state({ nowS: 0.01, running: 4, kvTokens: 2004 }), BOUNDS)).toBe(1590);
  });
});

describe("EcoFreqMetricsController (periodic, from engine metrics, for vLLM / SGLang)", () => {
  it("locks the replica's GPUs to EcoFreq's decode choice for the running batch, the top clock while requests wait", async () => {
    const { clock, gpus, actuator } = await simulatedGpus(2);
    const { scope } = testScope(actuator, clock, { instanceId: "e", gpus: [1], bounds: BOUNDS });
    const capacity = kvCapacityTokens(llm, h100, 1);
    let load = { running: 4, waiting: 0, kvUse: 2000 / capacity };
    const c = new EcoFreqMetricsController(scope, { eco: models.build(llm, h100, 1, BOUNDS, SLO), load: async () => load, kvCapacityTokens: capacity, periodMs: 200 });
    await c.tick();
    expect(gpus.lockOf(1)).toEqual({ minMhz: 1395, maxMhz: 1395 });
    expect(gpus.lockOf(0)).toBeNull();
    load = { running: 200, waiting: 0, kvUse: 150_000 / capacity };
    await c.tick();
    expect(c.mhz).toBe(1590);
    load = { running: 0, waiting: 0, kvUse: 0 };
    await c.tick();
    expect(c.mhz).toBe(1395);
    load = { running: 8, waiting: 2, kvUse: 0.01 };
    await c.tick();
    expect(gpus.lockOf(1)).toEqual({ minMhz: 1590, maxMhz: 1590 });
  });

  it("takes requests waiting in the site gateway's queue for its instance as waiting, though the engine's queue is empty", async () => {
    const { clock, gpus, actuator } = await simulatedGpus(2);
    const { scope } = testScope(actuator, clock, { instanceId: "e", gpus: [1], bounds: BOUNDS });
    const capacity = kvCapacityTokens(llm, h100, 1);
    let queued = 0;
    const c = new EcoFreqMetricsController(scope, { eco: models.build(llm, h100, 1, BOUNDS, SLO), load: async () => ({ running: 4, waiting: 0, kvUse: 2000 / capacity }), queued: () => queued, kvCapacityTokens: capacity, periodMs: 200 });
    await c.tick();
    expect(c.mhz).toBe(1395);
    queued = 3;
    await c.tick();
    expect(gpus.lockOf(1)).toEqual({ minMhz: 1590, maxMhz: 1590 });
  });
});
