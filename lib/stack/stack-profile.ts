import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gpuSpec } from "../../src/core/model/gpu-specs.ts";
import { variantLlmSpec } from "../../src/core/model/llm-specs.ts";
import { DYNAMOLLM_CLASS_LENGTHS } from "../../src/core/profiling/class-lengths.ts";
import { defaultClocks, virtualProfile } from "../../src/core/profiling/virtual-profiler.ts";
import { ProfileTable } from "../../src/core/schemas/profile.ts";
import type { StackConfig } from "./stack-config.ts";
import { makeDir } from "../../host-agent/util/make-dir.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/**
 * The local stack's virtual profile table of its model's variants on its GPU type (each variant's
 * architecture, rows labelled with the fleet's model and variant; DynamoLLM's 3x3 classes, seven
 * clocks, six load levels), cached under out/cache: it takes minutes to make, and
 * `greenference start` and `bench batch` read the same table.
 */
export async function stackProfileTable(c: Pick<StackConfig, "model" | "variants" | "gpuType" | "tps" | "seed">, log: (line: string) => void): Promise<ProfileTable> {
  const variants = c.variants.join("_");
  const file = join(ROOT, "out", "cache", `profile-${c.model}${variants === "base" ? "" : `-${variants}`}-${c.gpuType}-tp${c.tps.join("_")}-seed${c.seed}.json`);
  if (existsSync(file)) {
    const cached = ProfileTable.safeParse(JSON.parse(await readFile(file, "utf8")));
    if (cached.success) return cached.data;
  }
  log(`profiling ${c.model} (${c.variants.join(", ")}) on ${c.gpuType} in the simulator (TP ${c.tps.join(", ")}; cached in ${file})`);
  const gpu = gpuSpec(c.gpuType);
  const tables = c.variants.map((variant) => {
    const one = virtualProfile({ llm: variantLlmSpec(c.model, variant), gpu, tps: c.tps, clocksMhz: defaultClocks(gpu), classes: DYNAMOLLM_CLASS_LENGTHS, loadFractions: [0.05, 0.1, 0.2, 0.3, 0.4, 0.5], requestsPerPoint: 200, seed: c.seed });
    return { ...one, rows: one.rows.map((r) => ({ ...r, model: c.model, variant })) };
  });
  const table = { ...tables[0]!, rows: tables.flatMap((t) => t.rows) };
  await makeDir(dirname(file));
  await writeFile(file, JSON.stringify(table));
  return table;
}
