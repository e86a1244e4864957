import { rmSync } from "node:fs";
import { dirname } from "node:path";
import { buildFakeNvml } from "../../host-agent/gpu/fake-nvml.test-helper.ts";
import { NvmlBackend } from "../../host-agent/gpu/nvml/nvml-backend.ts";
import { percentiles, type Percentiles } from "./percentiles.ts";

export interface NvmlCallBench {
  call_us: Percentiles & { mean: number };
  calls: number;
  inputs: { library: string; call: string; warmup_calls: number };
}

/**
 * One NVML call through the agent's FFI path: `NvmlBackend.powerUsageW(0)` (koffi into
 * nvmlDeviceGetPowerUsage, the return check, the async wrapper), timed one awaited call at a time.
 * The library is the fake libnvidia-ml the tests compile (host-agent/test-fixtures/fake-nvml.c,
 * with `cc`), with its call log switched off so no file is written per call: the figure is the
 * FFI and agent overhead, not a driver's.
 *
 * @example
 * (await runNvmlCallBench(() => process.hrtime.bigint())).call_us.mean; // ~1..6 us
 */
export async function runNvmlCallBench(now: () => bigint, o = { calls: 20_000, warmup: 2_000 }): Promise<NvmlCallBench> {
  const fake = buildFakeNvml();
  fake.setEnv({ FAKE_NVML_LOG: null });
  const nvml = new NvmlBackend({ libraryPath: fake.libraryPath });
  try {
    await nvml.init();
    for (let i = 0; i < o.warmup; i++) await nvml.powerUsageW(0);
    const times: number[] = [];
    for (let i = 0; i < o.calls; i++) {
      const t0 = now();
      await nvml.powerUsageW(0);
      times.push(Number(now() - t0) / 1e3);
    }
    return {
      call_us: { ...percentiles(times), mean: Math.round((times.reduce((s, t) => s + t, 0) / times.length) * 1000) / 1000 },
      calls: o.calls,
      inputs: { library: "fake libnvidia-ml.so.1 compiled from host-agent/test-fixtures/fake-nvml.c (not a real driver)", call: "NvmlBackend.powerUsageW -> nvmlDeviceGetPowerUsage", warmup_calls: o.warmup },
    };
  } finally {
    await nvml.shutdown();
    rmSync(dirname(fake.libraryPath), { recursive: true, force: true });
  }
}
