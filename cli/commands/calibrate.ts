import { join } from "node:path";
import { defaultDataDir } from "../../host-agent/data/default-data-dir.ts";
import { readDataFile } from "../../host-agent/data/read-data-file.ts";
import { calibrationReport } from "../../src/core/calibration/calibration-report.ts";
import { parseSplitwise } from "../../src/core/calibration/splitwise-rows.ts";
import { parseAzureTrace } from "../../src/core/data/azure-trace.ts";
import { parseFreeshProfiles } from "../../src/core/data/freesh-profiles.ts";
import { parseFlags, printResult, positiveInt, type Command } from "../../lib/command.ts";

const usage = `usage: greenference calibrate [--data DIR] [--seed N] [--requests N] [--json]

Checks the performance and power model against its calibration targets: splitwise's measured
Llama2-70B prompt and token times (DIR/splitwise/perf_model.csv), GreenServe's A100 sweet spot and
1005->1410 MHz trade-off, and DynamoLLM Table I's energy-optimal (TP, clock) per class. Also
reports, without a goal, the model under load at FREESH's measured vLLM operating points
(DIR/freesh/profiles.json, lengths from DIR/azure-llm-2023/AzureLLMInferenceTrace_conv.csv).
Results are simulated by the model. --data defaults to the data/ folder the package carries.`;

/** `greenference calibrate`: the model's calibration report. */
export const calibrate: Command = {
  async run(argv) {
    const { values } = parseFlags(argv, { data: { type: "string", default: defaultDataDir() }, seed: { type: "string", default: "7" }, requests: { type: "string", default: "300" }, json: { type: "boolean", default: false } }, usage);
    if (values.help) return void console.log(usage);
    const file = join(values.data, "splitwise", "perf_model.csv");
    const rows = parseSplitwise(await readDataFile(file), file);
    const profilesFile = join(values.data, "freesh", "profiles.json");
    const traceFile = join(values.data, "azure-llm-2023", "AzureLLMInferenceTrace_conv.csv");
    const freesh = { profiles: parseFreeshProfiles(await readDataFile(profilesFile), profilesFile), lengths: parseAzureTrace(await readDataFile(traceFile), traceFile).requests };
    const report = calibrationReport(rows, freesh, { seed: positiveInt(values.seed, "--seed"), requests: positiveInt(values.requests, "--requests") });
    printResult({ data: values.data, ...report }, values.json, () => humanReport(report));
    return 0;
  },
};

function humanReport(r: ReturnType<typeof calibrationReport>): string {
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
  const lines = [
    "Calibration of the performance and power model (simulated)",
    `splitwise (${r.splitwise.rows} rows, ${r.splitwise.excluded_rows} beyond KV capacity left out): prompt APE p50 ${pct(r.splitwise.prompt_ape_p50)} p90 ${pct(r.splitwise.prompt_ape_p90)}; token APE p50 ${pct(r.splitwise.token_ape_p50)} p90 ${pct(r.splitwise.token_ape_p90)}`,
    `A100 + 8B decode: sweet spot ${r.a100_8b.sweet_spot_mhz} MHz; 1005->1410 MHz: ITL ${pct(r.a100_8b.itl_change_1005_to_1410)}, energy ${pct(r.a100_8b.energy_change_1005_to_1410)}`,
    ...(["prefill_first", "chunked"] as const).map((k) => `FREESH's measured vLLM points, model / measured (p50), ${k.replace("_", "-")}: ${Object.entries(r.freesh_vllm[k]).map(([gpu, m]) => `${gpu} TBT ${m.tbt_ratio_p50.toFixed(2)}x TTFT ${m.ttft_ratio_p50.toFixed(2)}x power ${m.power_ratio_p50.toFixed(2)}x, keeps up at ${m.keeps_up}/${m.points}`).join("; ")}`),
    `DynamoLLM Table I (${r.dynamollm_table1.layout}): ${r.dynamollm_table1.matches}/${r.dynamollm_table1.of} classes match; SLO verdict agrees on ${r.dynamollm_table1.feasible_agreement}/${r.dynamollm_table1.feasible_cells} cells`,
    ...r.dynamollm_table1.classes.map((c) => `  ${c.classId}: paper TP${c.paper.tp}@${c.paper.mhz}  ours ${c.ours ? `TP${c.ours.tp}@${c.ours.mhz}` : "none meets the SLO"}${c.match ? "  match" : ""}`),
    `goals met: ${Object.entries(r.goals_met).map(([k, v]) => `${k}=${v ? "yes" : "NO"}`).join(" ")}`,
  ];
  return lines.join("\n");
}
