import { gpuSpecs } from "../../src/core/model/gpu-specs.ts";
import { llmSpec } from "../../src/core/model/llm-specs.ts";
import { classLengthsFromScheme } from "../../src/core/profiling/class-lengths.ts";
import { defaultClocks, virtualProfile } from "../../src/core/profiling/virtual-profiler.ts";
import type { Fleet } from "../../src/core/schemas/fleet.ts";
import type { ProfileRow } from "../../src/core/schemas/profile.ts";
import { asCliError } from "../../lib/cli-error.ts";

/** Outer length bounds of a scheme's first and last bins when profiling it: tokens. */
const SHORTEST = { inputTokens: 16, outputTokens: 8 };
const LONGEST = { inputTokens: 4096, outputTokens: 1024 };

/** A virtual profile (simulated) of the fleet's first model on each GPU type the fleet has: TP 2/4/8, the GPU's default clocks, six load levels per class. */
export function fleetVirtualProfile(fleet: Fleet, seed: number): ProfileRow[] {
  const llm = asCliError(() => llmSpec(fleet.models[0]!.id));
  const types = [...new Set(fleet.sites.flatMap((s) => s.gpus.map((g) => g.type)))];
  const classes = classLengthsFromScheme(fleet.classScheme, [SHORTEST, LONGEST]);
  return types.flatMap((type) => {
    const gpu = gpuSpecs[type];
    return virtualProfile({ llm, gpu, tps: [2, 4, 8], clocksMhz: defaultClocks(gpu), classes, loadFractions: [0.05, 0.1, 0.2, 0.3, 0.4, 0.5], requestsPerPoint: 60, seed }).rows;
  });
}
