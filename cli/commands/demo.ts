import { gpuSpec } from "../../src/core/model/gpu-specs.ts";
import { llmSpec } from "../../src/core/model/llm-specs.ts";
import { energyOptimalConfig } from "../../src/core/calibration/energy-optimal-config.ts";
import { DYNAMOLLM_CLASS_LENGTHS } from "../../src/core/profiling/class-lengths.ts";
import { defaultClocks } from "../../src/core/profiling/virtual-profiler.ts";
import { markdownTable } from "../../lib/report/markdown-table.ts";
import { asCliError } from "../../lib/cli-error.ts";
import { parseFlags, printResult, positiveInt, type Command } from "../../lib/command.ts";

const usage = `usage: greenference demo [--model ID] [--gpu a100|h100] [--tokens-per-second N] [--seed N] [--json]

A quick look at the model without starting anything: a simulated server of 8 GPUs serves
each request class at a steady load; for each class it finds the (TP, clock) with the least energy
per request that still meets the SLO (p99 TTFT and TBT within 5x of unloaded), and compares it with
the default of running TP8 at max clock. Everything here is simulated by the calibrated model.`;

/** `greenference demo`: per-class energy-optimal configuration vs the max-clock default. */
export const demo: Command = {
  async run(argv) {
    const { values } = parseFlags(argv, { model: { type: "string", default: "llama2-70b" }, gpu: { type: "string", default: "h100" }, "tokens-per-second": { type: "string", default: "2000" }, seed: { type: "string", default: "1" }, json: { type: "boolean", default: false } }, usage);
    if (values.help) return void console.log(usage);
    const llm = asCliError(() => llmSpec(values.model));
    const gpu = asCliError(() => gpuSpec(values.gpu));
    const tokensPerSecond = positiveInt(values["tokens-per-second"], "--tokens-per-second");
    const seed = positiveInt(values.seed, "--seed");
    const clocks = defaultClocks(gpu);
    const classes = DYNAMOLLM_CLASS_LENGTHS.map((cls) => {
      const r = energyOptimalConfig({ llm, gpu, cls, tokensPerSecond, layout: { kind: "fill-server", gpus: 8 }, tps: [2, 4, 8], clocksMhz: clocks, sloMultiple: 5, referenceTp: 8, requests: 200, seed });
      const baseline = r.evaluations.find((e) => e.tp === 8 && e.mhz === gpu.maxMhz)!;
      const best = r.best;
      return {
        classId: cls.classId,
        best: best ? { tp: best.tp, mhz: best.mhz, energyPerRequestJ: best.energyPerRequestJ } : null,
        baseline: { tp: 8, mhz: gpu.maxMhz, energyPerRequestJ: baseline.energyPerRequestJ, meetsSlo: baseline.meetsSlo },
        energySaving: best ? 1 - best.energyPerRequestJ / baseline.energyPerRequestJ : null,
      };
    });
    const result = { simulated: true, model: llm.id, gpu: gpu.type, serverGpus: 8, tokensPerSecond, seed, clocks, classes };
    printResult(result, values.json, () => {
      const rows = classes.map((c) => [
        c.classId,
        c.best ? `TP${c.best.tp} @ ${c.best.mhz} MHz` : "none meets the SLO",
        c.best ? c.best.energyPerRequestJ.toFixed(0) : "-",
        `${c.baseline.energyPerRequestJ.toFixed(0)}${c.baseline.meetsSlo ? "" : " (misses SLO)"}`,
        c.energySaving === null ? "-" : `${(100 * c.energySaving).toFixed(1)}%`,
      ]);
      return [
        `Greenference demo (simulated): ${llm.id} on a server of 8 x ${gpu.type}, ${tokensPerSecond} tokens/s per class, seed ${seed}`,
        "",
        markdownTable(["class", "energy-optimal config", "J/request", `TP8 @ ${gpu.maxMhz} MHz J/request`, "saving"], rows),
        "",
        "Classes: input S<256<=M<1024<=L tokens, output S<100<=M<350<=L (DynamoLLM Table IV). Run `greenference calibrate` for the model's accuracy.",
      ].join("\n");
    });
    return 0;
  },
};
