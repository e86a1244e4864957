import { setTimeout as sleep } from "node:timers/promises";
import type { ServedRecord } from "../../host-agent/gpu/fallback-gpu-backend.ts";
import { checkGpus, type GpuCheck } from "../../host-agent/gpu/gpu-check.ts";
import type { GpuOp } from "../../host-agent/gpu/gpu-backend.ts";
import { GpuBackendKind, openGpuBackend } from "../../host-agent/gpu/open-gpu-backend.ts";
import { CliError } from "../../lib/cli-error.ts";
import { parseFlags, positiveInt, printResult, type Command } from "../../lib/command.ts";

const usage = `usage: greenference agent gpu-check [--gpu nvml|nvidia-smi|sim] [options] [--json]

Checks, read-only, that this host's GPUs give the agent what it needs, through the backend it would
use: every GPU's supported clocks, power, energy counter (read twice, --energy-window-ms apart: it must
not fall), power limit and default limit, clocks, and MIG state (which backend served each read: behind
NVML, nvidia-smi serves what NVML refuses). It locks, caps and carves nothing. Exits 1 when a read the
agent needs fails; MIG reads may be unsupported (no MIG).

  --gpu nvml|nvidia-smi|sim     backend (default nvml, falling back to nvidia-smi)
  --nvml-library PATH           NVML library (default libnvidia-ml.so.1)
  --nvidia-smi PATH             nvidia-smi executable (default: found on PATH)
  --sim-gpus N --sim-gpu-type T simulated GPUs (--gpu sim; default 2 H100-80GB)
  --energy-window-ms N          between the two energy reads (default 1000)
  --json                        print only the JSON result`;

const options = {
  gpu: { type: "string", default: "nvml" },
  "nvml-library": { type: "string" },
  "nvidia-smi": { type: "string" },
  "sim-gpus": { type: "string", default: "2" },
  "sim-gpu-type": { type: "string", default: "H100-80GB" },
  "energy-window-ms": { type: "string", default: "1000" },
  json: { type: "boolean", default: false },
} as const;

/** `greenference agent gpu-check`: a read-only check of this host's GPUs for the agent. */
export const agentGpuCheck: Command = {
  async run(argv) {
    const { values } = parseFlags(argv, options, usage);
    if (values.help) return void console.log(usage);
    const kind = GpuBackendKind.safeParse(values.gpu);
    if (!kind.success) throw new CliError(`--gpu must be nvml, nvidia-smi or sim, got '${values.gpu}'`);
    const served = new Map<GpuOp, ServedRecord>();
    const startedMs = Date.now();
    const opened = await openGpuBackend({
      preferred: kind.data,
      ...(values["nvml-library"] ? { nvml: { libraryPath: values["nvml-library"] } } : {}),
      ...(values["nvidia-smi"] ? { nvidiaSmi: { path: values["nvidia-smi"] } } : {}),
      sim: { type: values["sim-gpu-type"], count: positiveInt(values["sim-gpus"], "--sim-gpus"), now: () => Date.now() - startedMs },
      onServed: (record) => void served.set(record.op, record),
      log: (message) => console.error(`greenference agent gpu-check: ${message}`),
    }).catch((error: unknown) => new CliError(`cannot open the GPUs: ${(error as Error).message}`));
    if (opened instanceof CliError) {
      if (!values.json) throw opened;
      // With --json the result is the last stdout line whatever happened: here, no GPU to read.
      printResult({ ok: false, backend: null, devices: 0, reads: [], problems: [opened.message] }, true);
      return 1;
    }
    const gpu = opened;
    try {
      const check = await checkGpus(gpu, { energyWindowMs: positiveInt(values["energy-window-ms"], "--energy-window-ms"), sleep: (ms) => sleep(ms), servedBy: (op) => served.get(op) });
      printResult({ ...check, ok: check.problems.length === 0 }, values.json, () => humanView(check));
      return check.problems.length === 0 ? 0 : 1;
    } finally {
      await gpu.shutdown();
    }
  },
};

function humanView(check: GpuCheck): string {
  const lines = [`${check.devices} GPU(s) through ${check.backend}`];
  for (const g of check.reads) {
    for (const r of g.reads) lines.push(`  gpu ${g.gpu} ${r.op.padEnd(24)} ${r.ok ? JSON.stringify(r.value) : `FAILED: ${r.error}`}${r.servedBy ? ` (${r.servedBy})` : ""}`);
  }
  lines.push(check.problems.length === 0 ? "the agent has what it needs from these GPUs" : `the agent would not run right here:\n  ${check.problems.join("\n  ")}`);
  return lines.join("\n");
}
