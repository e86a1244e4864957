import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gpuSpec } from "../../src/core/model/gpu-specs.ts";
import { llmSpec } from "../../src/core/model/llm-specs.ts";
import { DYNAMOLLM_CLASS_LENGTHS } from "../../src/core/profiling/class-lengths.ts";
import { defaultClocks, virtualProfile } from "../../src/core/profiling/virtual-profiler.ts";
import { ProfileTable } from "../../src/core/schemas/profile.ts";
import type { StackConfig } from "./stack-config.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/**
 * The local stack's virtual profile table of its model on its GPU type (DynamoLLM's 3x3 classes,
 * seven clocks, six load levels), cached under out/cache: it takes minutes to make, and
 * `greenference start` and `bench batch` read the same table.
 */
export async function stackProfileTable(c: Pick<StackConfig, "model" | "gpuType" | "tps" | "seed">, log: (line: string) => void): Promise<ProfileTable> {
  const file = join(ROOT, "out", "cache", `profile-${c.model}-${c.gpuType}-tp${c.tps.join("_")}-seed${c.seed}.json`);
  if (existsSync(file)) {
    const cached = ProfileTable.safeParse(JSON.parse(await readFile(file, "utf8")));
    if (cached.success) return cached.data;
  }
  log(`profiling ${c.model} on ${c.gpuType} in the simulator (TP ${c.tps.join(", ")}; cached in ${file})`);
  const gpu = gpuSpec(c.gpuType);
  const table = virtualProfile({ llm: llmSpec(c.model), gpu, tps: c.tps, clocksMhz: defaultClocks(gpu), classes: DYNAMOLLM_CLASS_LENGTHS, loadFractions: [0.05, 0.1, 0.2, 0.3, 0.4, 0.5], requestsPerPoint: 200, seed: c.seed });
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, JSON.stringify(table));
  return table;
}
