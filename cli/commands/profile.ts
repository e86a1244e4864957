import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { gpuSpec } from "../../src/core/model/gpu-specs.ts";
import { llmSpec } from "../../src/core/model/llm-specs.ts";
import { classLengthsFromScheme, DYNAMOLLM_CLASS_LENGTHS } from "../../src/core/profiling/class-lengths.ts";
import { schemeFromPercentiles } from "../../src/core/workload/class-scheme.ts";
import { loadAzureTrace } from "../../host-agent/data/read-data-file.ts";
import { defaultClocks, virtualProfile, weightsFit } from "../../src/core/profiling/virtual-profiler.ts";
import { asCliError, CliError } from "../../lib/cli-error.ts";
import { parseFlags, printResult, positiveInt, type Command } from "../../lib/command.ts";
import { makeDir } from "../../host-agent/util/make-dir.ts";

const usage = `usage: greenference profile --virtual --model ID --gpu a100|h100 --out DIR [--tp 2,4,8] [--loads 0.05,0.1,0.2,0.3,0.4,0.5] [--trace FILE] [--scheduling prefill-first|chunked] [--requests N] [--seed N] [--json]

Virtual profiling: runs steady Poisson load through the engine model for every TP degree, 7 clocks
from 800 MHz to the GPU's max, 9 request classes and each load level (fractions of the estimated
max-clock capacity), and writes the profile table (JSON) to DIR. Classes are DynamoLLM's (Table IV
bins) unless --trace names an Azure-format trace, whose 33rd/66th length percentiles define them.
--scheduling chunked profiles an engine that prefills prompts in chunks beside decoding (vLLM V1,
SGLang) instead of in iterations of their own (the default, as splitwise measured). Results are simulated.
Real GPUs are profiled by the host agent on the site: greenference agent profile --help.`;

/** `greenference profile`: writes a profile table. */
export const profile: Command = {
  async run(argv) {
    const { values } = parseFlags(
      argv,
      {
        virtual: { type: "boolean", default: false },
        model: { type: "string" },
        gpu: { type: "string" },
        out: { type: "string" },
        tp: { type: "string", default: "2,4,8" },
        trace: { type: "string" },
        loads: { type: "string", default: "0.05,0.1,0.2,0.3,0.4,0.5" },
        requests: { type: "string", default: "200" },
        seed: { type: "string", default: "1" },
        scheduling: { type: "string", default: "prefill-first" },
        json: { type: "boolean", default: false },
      },
      usage,
    );
    if (values.help) return void console.log(usage);
    if (!values.virtual) throw new CliError(`only --virtual profiling runs here; real GPUs are profiled on their site with \`greenference agent profile\`\n${usage}`);
    if (!values.model || !values.gpu || !values.out) throw new CliError(`--model, --gpu and --out are required\n${usage}`);
    const llm = asCliError(() => llmSpec(values.model!));
    const gpu = asCliError(() => gpuSpec(values.gpu!));
    const tps = values.tp.split(",").map((t) => positiveInt(t.trim(), "--tp"));
    const unfit = tps.filter((tp) => !weightsFit(llm, gpu, tp));
    if (unfit.length === tps.length) throw new CliError(`--tp ${values.tp}: ${llm.id}'s weights fit on no such number of ${gpu.type} GPUs; give a larger TP`);
    if (unfit.length > 0) console.error(`greenference profile: --tp ${unfit.join(",")} left out: ${llm.id}'s weights do not fit on so few ${gpu.type} GPUs`);
    const loadFractions = values.loads.split(",").map((x) => {
      const n = Number(x);
      if (!(n > 0 && n <= 1)) throw new CliError(`--loads takes fractions in (0, 1], got '${x}'`);
      return n;
    });
    const scheduling = values.scheduling;
    if (scheduling !== "prefill-first" && scheduling !== "chunked") throw new CliError(`--scheduling takes prefill-first or chunked, got '${scheduling}'`);
    const clocks = defaultClocks(gpu);
    const classes = values.trace ? await traceClasses(values.trace) : DYNAMOLLM_CLASS_LENGTHS;
    // Before profiling, so that an --out that cannot be created fails at once.
    await makeDir(values.out);
    const started = performance.now();
    const table = virtualProfile({
      llm,
      gpu,
      tps,
      clocksMhz: clocks,
      classes,
      loadFractions,
      requestsPerPoint: positiveInt(values.requests, "--requests"),
      seed: positiveInt(values.seed, "--seed"),
      scheduling,
      onPoint: (done, total) => {
        if (process.stderr.isTTY && (done % 50 === 0 || done === total)) process.stderr.write(`\rprofiling ${done}/${total} points`);
      },
    });
    if (process.stderr.isTTY) process.stderr.write("\n");
    const file = join(values.out, `profile-${llm.id}-${gpu.type}.json`);
    await writeFile(file, JSON.stringify(table, null, 1));
    const result = {
      file,
      simulated: true,
      rows: table.rows.length,
      stable_rows: table.rows.filter((r) => r.stable).length,
      classes: classes.length,
      tps: [...new Set(table.rows.map((r) => r.tp))],
      clocks,
      loads: loadFractions.length,
      scheduling,
      seed: Number(values.seed),
      seconds: Math.round((performance.now() - started) / 100) / 10,
    };
    printResult(result, values.json, () => `wrote ${result.rows} rows (${result.stable_rows} stable) to ${file}`);
    return 0;
  },
};

async function traceClasses(path: string) {
  const trace = await loadAzureTrace(path);
  return classLengthsFromScheme(schemeFromPercentiles(trace.requests), trace.requests);
}
