import { describe, expect, it } from "vitest";
import { gpuSpec } from "../../src/core/model/gpu-specs.ts";
import { decodeTime } from "../../src/core/model/iteration-time.ts";
import { llmSpec } from "../../src/core/model/llm-specs.ts";
import { SitePlan } from "../../src/core/schemas/plan.ts";
import { simulatedGpus } from "./controllers.test-helper.ts";
import { nextPowerLadderState, POWER_LADDER_DEFAULTS, PowerLadder } from "./power-ladder.ts";

const OVERHEAD = 1.82;
const site = (powerCapW: number) =>
  SitePlan.parse({
    site: "wind-a",
    powerCapW,
    instances: [
      { id: "eco", model: "llama3.1-8b", variant: "base", tp: 2, gpus: [0, 1], clock: { mode: "policy", policy: "ecofreq", minMhz: 1005, maxMhz: 1980 } },
      { id: "fixed", model: "llama3.1-8b", variant: "base", tp: 2, gpus: [2, 3], clock: { mode: "locked", mhz: 1500 } },
    ],
  });

/** Four busy simulated H100s (a decode batch of 64), the policy pair running at the top of its bounds. */
async function busySite() {
  const sim = await simulatedGpus(4);
  const ctx = { llm: llmSpec("llama3.1-8b"), gpu: gpuSpec("H100-80GB"), tp: 2 };
  for (let i = 0; i < 4; i++) sim.hardware.setLoad(i, (mhz) => decodeTime({ ...ctx, mhz }, 64, 60_000));
  await sim.gpus.lockGraphicsClocks(0, 1005, 1980);
  await sim.gpus.lockGraphicsClocks(1, 1005, 1980);
  await sim.gpus.lockGraphicsClocks(2, 1500, 1500);
  await sim.gpus.lockGraphicsClocks(3, 1500, 1500);
  const sitePowerW = async () => (await Promise.all([0, 1, 2, 3].map((i) => sim.gpus.powerUsageW(i)))).reduce((s, w) => s + w, 0) * OVERHEAD;
  const ladder = new PowerLadder({ actuator: sim.actuator, gpuCount: 4, serverOverhead: OVERHEAD });
  return { ...sim, ladder, sitePowerW };
}

describe("nextPowerLadderState", () => {
  const o = POWER_LADDER_DEFAULTS;
  it("climbs one rung per check over the cap, up to the top", () => {
    let s = { level: 0, calmChecks: 0 };
    s = nextPowerLadderState(s, 1010, 1000, o);
    expect(s.level).toBe(1);
    s = nextPowerLadderState(s, 1010, 1000, o);
    expect(s.level).toBe(2);
    expect(nextPowerLadderState(s, 1010, 1000, o).level).toBe(2);
  });
  it("steps down one rung after holdChecks checks at or below releaseFraction of the cap, and holds in between", () => {
    let s = { level: 2, calmChecks: 0 };
    s = nextPowerLadderState(s, 970, 1000, o);
    expect(s).toEqual({ level: 2, calmChecks: 0 });
    for (let i = 1; i < o.holdChecks; i++) expect((s = nextPowerLadderState(s, 900, 1000, o))).toEqual({ level: 2, calmChecks: i });
    expect((s = nextPowerLadderState(s, 900, 1000, o))).toEqual({ level: 1, calmChecks: 0 });
    s = nextPowerLadderState(s, 1001, 1000, o);
    expect(s).toEqual({ level: 2, calmChecks: 0 });
  });
});

describe("PowerLadder on simulated GPUs", () => {
  it("engages over the cap (policy clocks to their lower bound) and releases under it (back to the plan's range)", async () => {
    const { gpus, ladder, sitePowerW } = await busySite();
    const high = await sitePowerW();
    await gpus.lockGraphicsClocks(0, 1005, 1005);
    await gpus.lockGraphicsClocks(1, 1005, 1005);
    const low = await sitePowerW();
    expect(low).toBeLessThan(high * 0.9);
    await gpus.lockGraphicsClocks(0, 1005, 1980);
    await gpus.lockGraphicsClocks(1, 1005, 1980);
    // The cap lies where the lower bound alone brings the site under it with room to release.
    const plan = site((high + low / POWER_LADDER_DEFAULTS.releaseFraction) / 2);

    await ladder.check(plan, true);
    expect(ladder.step).toBe("min-clock");
    expect(ladder.sitePowerW).toBeCloseTo(high);
    expect([0, 1, 2, 3].map((i) => gpus.lockOf(i)?.maxMhz)).toEqual([1005, 1005, 1500, 1500]);
    expect(ladder.allowed({ minMhz: 1005, maxMhz: 1980 })).toEqual({ minMhz: 1005, maxMhz: 1005 });
    expect(await sitePowerW()).toBeLessThan(plan.powerCapW * POWER_LADDER_DEFAULTS.releaseFraction);

    for (let i = 1; i < POWER_LADDER_DEFAULTS.holdChecks; i++) {
      await ladder.check(plan, true);
      expect(ladder.step).toBe("min-clock");
    }
    await ladder.check(plan, true);
    expect(ladder.step).toBe("none");
    expect(gpus.lockOf(0)).toEqual({ minMhz: 1005, maxMhz: 1980 });
    expect(gpus.lockOf(2)).toEqual({ minMhz: 1500, maxMhz: 1500 });
    expect(ladder.allowed({ minMhz: 1005, maxMhz: 1980 })).toEqual({ minMhz: 1005, maxMhz: 1980 });
  });

  it("lowers the GPUs' power limits when the lower bound is not enough, and restores them on the way down", async () => {
    const { gpus, ladder, sitePowerW } = await busySite();
    const tight = site(1200);
    await ladder.check(tight, true);
    expect(ladder.step).toBe("min-clock");
    expect(await sitePowerW()).toBeGreaterThan(1200);
    await ladder.check(tight, true);
    expect(ladder.step).toBe("power-limit");
    const share = Math.floor(1200 / OVERHEAD / 4);
    expect(await Promise.all([0, 1, 2, 3].map((i) => gpus.powerLimitW(i)))).toEqual([share, share, share, share]);
    expect(await sitePowerW()).toBeLessThanOrEqual(1200);
    // Clocks stay within the plan: the locked pair keeps 1500 MHz; the limit throttles below it.
    expect(gpus.lockOf(2)).toEqual({ minMhz: 1500, maxMhz: 1500 });

    const roomy = site(20_000);
    for (let i = 0; i < POWER_LADDER_DEFAULTS.holdChecks; i++) await ladder.check(roomy, true);
    expect(ladder.step).toBe("min-clock");
    expect(await gpus.powerLimitW(0)).toBe(700);
    for (let i = 0; i < POWER_LADDER_DEFAULTS.holdChecks; i++) await ladder.check(roomy, true);
    expect(ladder.step).toBe("none");
    expect(gpus.lockOf(0)).toEqual({ minMhz: 1005, maxMhz: 1980 });
  });

  it("steps off at once without a plan, and touches no clock while a plan is being applied", async () => {
    const { gpus, ladder } = await busySite();
    await ladder.check(site(1000), false);
    expect(ladder.step).toBe("min-clock");
    expect(gpus.lockOf(0)).toEqual({ minMhz: 1005, maxMhz: 1980 });
    await ladder.check(site(1000), false);
    expect(ladder.step).toBe("power-limit");
    await ladder.check(null, true);
    expect(ladder.step).toBe("none");
    expect(ladder.capW).toBeNull();
    expect(await gpus.powerLimitW(1)).toBe(700);
  });
});
