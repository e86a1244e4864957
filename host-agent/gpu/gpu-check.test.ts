import { describe, expect, it } from "vitest";
import { checkGpus } from "./gpu-check.ts";
import type { GpuBackend } from "./gpu-backend.ts";
import { GpuError } from "./gpu-error.ts";
import { SimulatedGpuBackend } from "./sim/simulated-gpu-backend.ts";

async function simulated(count = 2): Promise<{ gpus: SimulatedGpuBackend; advance: (ms: number) => Promise<void> }> {
  let nowMs = 0;
  const gpus = new SimulatedGpuBackend({ type: "H100-80GB", count, now: () => nowMs });
  await gpus.init();
  return { gpus, advance: async (ms) => void (nowMs += ms) };
}

/** `inner` with one operation answering `error` instead. */
function failing(inner: GpuBackend, op: keyof GpuBackend, error: Error): GpuBackend {
  return new Proxy(inner, {
    get(target, prop, receiver) {
      if (prop === op) return () => Promise.reject(error);
      const value = Reflect.get(target, prop, receiver) as unknown;
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

describe("checkGpus", () => {
  it("reads every GPU without changing it: clocks, power, a rising energy counter, limits, MIG mode", async () => {
    const { gpus, advance } = await simulated();
    const check = await checkGpus(gpus, { energyWindowMs: 1000, sleep: advance });
    expect(check).toMatchObject({ backend: "sim", devices: 2, problems: [] });
    const first = new Map(check.reads[0]!.reads.map((r) => [r.op, r]));
    expect(first.get("supportedGraphicsClocks")!.value).toEqual({ count: 110, highestMhz: 1980, lowestMhz: 345 });
    expect((first.get("totalEnergyJ")!.value as { meanW: number }).meanW).toBeCloseTo(await gpus.powerUsageW(0), 6);
    expect(first.get("migMode")!.value).toEqual({ current: false, pending: false });
    expect([await gpus.powerLimitW(0), await gpus.migMode(1)]).toEqual([700, { current: false, pending: false }]);
  });

  it("names each required read that fails, and takes a backend without MIG as one without MIG", async () => {
    const { gpus, advance } = await simulated(1);
    const noMig = failing(gpus, "migMode", new GpuError("NOT_SUPPORTED", { backend: "sim", op: "migMode", device: 0 }, "no MIG"));
    expect((await checkGpus(noMig, { energyWindowMs: 10, sleep: advance })).problems).toEqual([]);
    const noPower = failing(gpus, "powerUsageW", new GpuError("NOT_SUPPORTED", { backend: "sim", op: "powerUsageW", device: 0 }, "power.draw is [N/A]"));
    expect((await checkGpus(noPower, { energyWindowMs: 10, sleep: advance })).problems).toEqual([expect.stringMatching(/^gpu 0 powerUsageW: .*power\.draw is \[N\/A\]/)]);
  });
});
