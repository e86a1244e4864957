import { describe, expect, it } from "vitest";
import { gpuSpecs } from "./gpu-specs.ts";
import { decodeTime, prefillTime } from "./iteration-time.ts";
import { llmSpecs } from "./llm-specs.ts";
import { busyPowerW, fullSitePowerW, relativeVoltage, throttle } from "./power.ts";

const a100 = gpuSpecs["A100-80GB"];
const llm = llmSpecs["llama3.1-8b"];

describe("power model", () => {
  it("keeps the voltage at its floor up to the knee and reaches 1 at max clock", () => {
    expect(relativeVoltage(a100, 600)).toBe(relativeVoltage(a100, a100.power.voltageKneeMhz));
    expect(relativeVoltage(a100, a100.maxMhz)).toBeCloseTo(1, 12);
    expect(relativeVoltage(a100, 1200)).toBeGreaterThan(relativeVoltage(a100, 1100));
  });

  it("draws more at higher clocks for the same work", () => {
    const t = decodeTime({ llm, gpu: a100, tp: 1, mhz: 1410 }, 32, 32 * 1024);
    expect(busyPowerW(a100, 1410, t)).toBeGreaterThan(busyPowerW(a100, 1005, t));
    expect(busyPowerW(a100, 1005, t)).toBeGreaterThan(a100.power.idleW);
  });

  it("throttles compute-bound prefill to stay within TDP, near 1305 MHz on A100 (GreenServe Fig. 5)", () => {
    const run = throttle(a100, 1410, (mhz) => prefillTime({ llm, gpu: a100, tp: 1, mhz }, [4096]));
    expect(run.powerW).toBeLessThanOrEqual(a100.tdpW + 1e-9);
    expect(run.effectiveMhz).toBeLessThan(1410);
    expect(run.effectiveMhz).toBeGreaterThan(1200);
    expect(run.effectiveMhz).toBeLessThan(1350);
  });

  it("leaves memory-bound decode at the requested clock", () => {
    const run = throttle(a100, 1410, (mhz) => decodeTime({ llm, gpu: a100, tp: 1, mhz }, 16, 16 * 512));
    expect(run.effectiveMhz).toBe(1410);
    expect(run.energyJ).toBeCloseTo((run.powerW * run.ms) / 1e3, 9);
  });

  it("gives a site's full power as its GPUs' TDP with Heron's server overhead", () => {
    expect(fullSitePowerW([{ type: "H100-80GB", count: 8 }])).toBeCloseTo(8 * 700 * 1.82, 9);
    expect(fullSitePowerW([{ type: "H100-80GB", count: 4 }, { type: "A100-80GB", count: 2 }])).toBeCloseTo((4 * 700 + 2 * 400) * 1.82, 9);
    expect(fullSitePowerW([])).toBe(0);
  });
});
