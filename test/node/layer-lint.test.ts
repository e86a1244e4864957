import { ESLint } from "eslint";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const eslint = new ESLint({ cwd: ROOT });

/** The messages of the layer rules for `code` as if it were the file at `path` (the file need not exist). */
async function layerErrors(path: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: `${ROOT}${path}` });
  return result!.messages.filter((m) => m.ruleId === "no-restricted-imports" || m.ruleId === "no-restricted-syntax").map((m) => m.message);
}

describe("lint keeps the layers (eslint.config.js)", () => {
  it("src/core imports no platform API and nothing outside src/core, whatever its depth", async () => {
    expect(await layerErrors("src/core/planning/x.ts", `import { readFileSync } from "node:fs";\nexport const x = readFileSync;`)).toEqual([expect.stringContaining("no platform API")]);
    expect(await layerErrors("src/core/planning/x.ts", `import { serve } from "../../worker/inference.ts";\nexport const x = serve;`)).toEqual([expect.stringContaining("nothing outside src/core")]);
    expect(await layerErrors("src/core/planning/heron/x.ts", `import type { Env } from "../../../edge/env.ts";\nexport type X = Env;`)).toEqual([expect.stringContaining("nothing outside src/core")]);
    expect(await layerErrors("src/core/planning/heron/x.ts", `import { Plan } from "../../schemas/plan.ts";\nexport const x = Plan;`)).toEqual([]);
    // Tests may bring the real solver and the data files in.
    expect(await layerErrors("src/core/planning/x.test.ts", `import { javascriptLpSolver } from "../../solver/javascript-lp-solver.ts";\nexport const x = javascriptLpSolver;`)).toEqual([]);
  });

  it("host-agent/, durable-objects/ and src/edge/ import nothing from src/worker/", async () => {
    expect(await layerErrors("host-agent/gateway/x.ts", `import { RECEIPT_HEADERS } from "../../src/worker/receipt.ts";\nexport const x = RECEIPT_HEADERS;`)).toEqual([expect.stringContaining("src/core/schemas")]);
    expect(await layerErrors("durable-objects/x.ts", `import { runBatchLine } from "../src/worker/batch/batch-line-run.ts";\nexport const x = runBatchLine;`)).toEqual([expect.stringContaining("src/core/schemas")]);
    expect(await layerErrors("src/edge/x.ts", `import { openAiError } from "../worker/openai-error.ts";\nexport const x = openAiError;`)).toEqual([expect.stringContaining("src/core/schemas")]);
    expect(await layerErrors("durable-objects/x.ts", `import { RECEIPT_HEADERS } from "../src/core/schemas/receipt.ts";\nimport { ANONYMOUS } from "../src/edge/identity.ts";\nexport const x = [RECEIPT_HEADERS, ANONYMOUS];`)).toEqual([]);
  });

  it("cli/ and bench/ do not import each other, lib/ neither of them", async () => {
    expect(await layerErrors("cli/commands/x.ts", `import { runPlanBench } from "../../bench/plan-bench.ts";\nexport const x = runPlanBench;`)).toEqual([expect.stringContaining("cli/ does not import bench/")]);
    expect(await layerErrors("cli/commands/x.ts", `export const x = () => import("../../bench/plan-bench.ts");`)).toEqual([expect.stringContaining("cli/bench-commands.ts")]);
    expect(await layerErrors("bench/reproduce/x.ts", `import { main } from "../../cli/main.ts";\nexport const x = main;`)).toEqual([expect.stringContaining("bench/ does not import cli/")]);
    expect(await layerErrors("lib/stack/x.ts", `import { benchCommands } from "../../bench/commands/index.ts";\nexport const x = benchCommands;`)).toEqual([expect.stringContaining("lib/ sits below")]);
    expect(await layerErrors("bench/x.ts", `import { markdownTable } from "../lib/report/markdown-table.ts";\nexport const x = markdownTable;`)).toEqual([]);
  });
});
