import cliProgress from "cli-progress";
import { knownPerfModel } from "../../src/core/model/model-identity.ts";
import { llmSpec } from "../../src/core/model/llm-specs.ts";
import { DYNAMOLLM_CLASS_LENGTHS, LengthRange, type ClassLengths } from "../../src/core/profiling/class-lengths.ts";
import { GpuType } from "../../src/core/schemas/ids.ts";
import { ProfileFileError, runProfile } from "../../host-agent/profiler/agent-profiler.ts";
import { openProfilerEngines, type ProfilerEngineOptions } from "../../host-agent/profiler/profile-engines.ts";
import { pickClocks, type ProfileGrid } from "../../host-agent/profiler/profile-grid.ts";
import { asCliError, CliError } from "../../lib/cli-error.ts";
import { parseFlags, positiveInt, printResult, type Command } from "../../lib/command.ts";

const usage = `usage: greenference agent profile --model ID [--engine-url URL | --engine sim|vllm|sglang] [options] [--json]

Profiles this site's own engines through their OpenAI API, as Heron profiles GPUs: for every TP
degree, clock, request class and load level, Poisson arrivals of streamed requests of the class at
the level's rate, with the GPUs locked at the clock through the GPU backend and their power and
energy read from it (NVML). Writes the profile table the planners read (PUT /admin/v1/profile):
p50/p99 TTFT, TBT and E2E, peak and average power, energy per request. The table is rewritten after
every point; run the same command again to continue an interrupted run.

  --model ID                 the fleet's id of the model (rows are keyed by it)
  --perf-model KEY           its performance-model key, when it has one (enables --loads)
  --served-name NAME         the name the engine serves (default: ID); --weights W what it loads
  --engine-url URL           an engine already running (its TP is the number of --gpus)
  --engine-speed X           engine seconds per wall second of that engine (a simulated one; default 1)
  --engine sim|vllm|sglang   or start engines per TP (vllm/sglang: --engine-command TEMPLATE)
  --gpu nvml|nvidia-smi|sim  GPU backend (default nvml); --nvml-library PATH, --gpu-type T
  --gpus 0,1                 GPU indices engines use (default 0..max TP - 1)
  --sim-speed X              simulated seconds per wall second with --engine sim (default 10)
  --tp 1,2                   TP degrees (default 1)
  --clocks auto|MHz,...      clocks (default auto: --clock-count of the GPU's clocks from 800 MHz up, default 4)
  --classes SS,MM            DynamoLLM classes to profile (default SS,MM,LL), or
  --class-lengths ID=IN-IN/OUT-OUT,...   classes of your own, e.g. AA=100-400/20-80
  --loads 0.1,0.3,0.5        load levels as fractions of the max-clock capacity estimate (needs --perf-model)
  --rates 0.5,1,2            or as request rates, req/s
  --requests N               requests per point (default 40); --seed N (default 1)
  --max-context N            longest prompt + output (default: the performance model's, else 4096)
  --out FILE                 the table (default profile-<model>-<gpu>.json)`;

const options = {
  model: { type: "string" },
  "perf-model": { type: "string" },
  "served-name": { type: "string" },
  weights: { type: "string" },
  "engine-url": { type: "string" },
  "engine-speed": { type: "string", default: "1" },
  engine: { type: "string" },
  "engine-command": { type: "string" },
  "engine-start-timeout-ms": { type: "string", default: "900000" },
  gpu: { type: "string", default: "nvml" },
  "nvml-library": { type: "string" },
  "gpu-type": { type: "string" },
  gpus: { type: "string" },
  "sim-speed": { type: "string", default: "10" },
  tp: { type: "string", default: "1" },
  clocks: { type: "string", default: "auto" },
  "clock-count": { type: "string", default: "4" },
  classes: { type: "string", default: "SS,MM,LL" },
  "class-lengths": { type: "string" },
  loads: { type: "string" },
  rates: { type: "string" },
  requests: { type: "string", default: "40" },
  seed: { type: "string", default: "1" },
  "max-context": { type: "string" },
  out: { type: "string" },
  json: { type: "boolean", default: false },
} as const;

/** `greenference agent profile`: measures the site's engines into a profile table. */
export const agentProfile: Command = {
  async run(argv) {
    const { values: v } = parseFlags(argv, options, usage);
    if (v.help) return void console.log(usage);
    if (!v.model) throw new CliError(`--model is required\n${usage}`);
    const perfModel = v["perf-model"] ?? (knownPerfModel(v.model) ? v.model : undefined);
    if (perfModel !== undefined && !knownPerfModel(perfModel)) throw new CliError(`--perf-model: the performance model does not know "${perfModel}"`);
    const tps = list(v.tp, "--tp").map((t) => positiveInt(String(t), "--tp"));
    const gpus = v.gpus ? list(v.gpus, "--gpus").map((g) => nonNegativeInt(g, "--gpus")) : Array.from({ length: Math.max(...tps) }, (_, i) => i);
    const engine = engineKind(v.engine, v["engine-url"]);
    const gpuType = v["gpu-type"] === undefined ? undefined : parsed(GpuType, v["gpu-type"], "--gpu-type");
    const gpu = oneOf(v.gpu, ["nvml", "nvidia-smi", "sim"] as const, "--gpu");
    const engineOptions: ProfilerEngineOptions = {
      model: v.model,
      ...(perfModel ? { perfModel } : {}),
      ...(v["served-name"] ? { servedName: v["served-name"] } : {}),
      ...(v.weights ? { weights: v.weights } : {}),
      engine,
      ...(v["engine-url"] ? { engineUrl: v["engine-url"] } : {}),
      engineSpeed: positiveNumber(v["engine-speed"], "--engine-speed"),
      ...(v["engine-command"] ? { engineCommand: v["engine-command"] } : {}),
      engineStartTimeoutMs: positiveInt(v["engine-start-timeout-ms"], "--engine-start-timeout-ms"),
      gpu,
      ...(v["nvml-library"] ? { nvmlLibrary: v["nvml-library"] } : {}),
      ...(gpuType ? { gpuType } : {}),
      gpus,
      simSpeed: positiveNumber(v["sim-speed"], "--sim-speed"),
      log: (m) => process.stderr.write(`${m}\n`),
    };
    const engines = await asCliError(() => openProfilerEngines(engineOptions));
    let grid: ProfileGrid;
    try {
      grid = {
        model: v.model,
        ...(perfModel ? { perfModel } : {}),
        gpu: engines.gpuType,
        tps,
        clocksMhz: v.clocks === "auto" ? pickClocks(await engines.supportedClocks(), positiveInt(v["clock-count"], "--clock-count")) : list(v.clocks, "--clocks").map((c) => positiveNumber(c, "--clocks")),
        classes: v["class-lengths"] ? ownClasses(v["class-lengths"]) : dynamoClasses(v.classes),
        ...loadLevels(v.loads, v.rates, perfModel),
        requestsPerPoint: positiveInt(v.requests, "--requests"),
        seed: positiveInt(v.seed, "--seed"),
        maxContext: v["max-context"] ? positiveInt(v["max-context"], "--max-context") : perfModel ? llmSpec(perfModel).maxContext : 4096,
      };
    } catch (error) {
      await engines.close();
      throw error;
    }
    const out = v.out ?? `profile-${v.model.replace(/[^A-Za-z0-9._-]+/g, "_")}-${engines.gpuType}.json`;
    const bar = process.stderr.isTTY ? new cliProgress.SingleBar({ stream: process.stderr, format: "profiling [{bar}] {value}/{total} points | ETA {eta_formatted} | {point}", etaBuffer: 8, hideCursor: true }, cliProgress.Presets.shades_classic) : undefined;
    let barStarted = false;
    const started = performance.now();
    let run: Awaited<ReturnType<typeof runProfile>>;
    try {
      run = await runProfile({
        grid,
        engines,
        out,
        onPoint: (done, total, p) => {
          if (bar && !barStarted) bar.start(total, 0, { point: "" });
          barStarted = true;
          bar?.update(done, { point: `TP${p.tp} ${p.mhz} MHz ${p.cls.classId} ${p.loadRps} req/s` });
        },
      });
    } catch (error) {
      if (error instanceof ProfileFileError) throw new CliError(error.message);
      throw error;
    } finally {
      bar?.stop();
    }
    const minutes = (performance.now() - started) / 60_000;
    const rows = run.table.rows;
    const result = {
      file: out,
      complete: run.table.source.details.complete === true,
      rows: rows.length,
      stable_rows: rows.filter((r) => r.stable).length,
      measured: run.measured,
      resumed: run.resumed,
      model: grid.model,
      gpu: grid.gpu,
      tps: grid.tps,
      clocks: grid.clocksMhz,
      classes: grid.classes.map((c) => c.classId),
      loads_rps: [...new Set(rows.map((r) => r.loadRps))],
      engine: engines.details,
      rows_per_minute: Math.round((run.measured / Math.max(minutes, 1e-9)) * 10) / 10,
    };
    printResult(result, v.json, () => `${result.complete ? "wrote" : "wrote a partial table:"} ${result.rows} rows (${result.stable_rows} stable; ${run.measured} measured now, ${run.resumed} from the file) to ${out}\nupload: curl -X PUT -H "authorization: Bearer $ADMIN_TOKEN" --data @${out} $EDGE/admin/v1/profile`);
    return 0;
  },
};

function engineKind(engine: string | undefined, url: string | undefined): ProfilerEngineOptions["engine"] {
  if (url !== undefined && engine !== undefined) throw new CliError("give --engine-url (an engine already running) or --engine (engines to start), not both");
  if (url !== undefined) return "url";
  return oneOf(engine ?? "vllm", ["sim", "vllm", "sglang"] as const, "--engine");
}

function loadLevels(loads: string | undefined, rates: string | undefined, perfModel: string | undefined): Pick<ProfileGrid, "loadFractions" | "ratesRps"> {
  if (loads !== undefined && rates !== undefined) throw new CliError("give --loads or --rates, not both");
  if (rates !== undefined) return { ratesRps: list(rates, "--rates").map((r) => positiveNumber(r, "--rates")) };
  if (!perfModel) throw new CliError("--rates is required for a model the performance model does not know (--loads needs its capacity estimate)");
  const fractions = list(loads ?? "0.1,0.3,0.5", "--loads").map((x) => positiveNumber(x, "--loads"));
  if (fractions.some((f) => f > 1)) throw new CliError("--loads takes fractions in (0, 1]");
  return { loadFractions: fractions };
}

function dynamoClasses(ids: string): ClassLengths[] {
  return list(ids, "--classes").map((id) => {
    const c = DYNAMOLLM_CLASS_LENGTHS.find((x) => x.classId === id);
    if (!c) throw new CliError(`--classes: no class ${id}; DynamoLLM's are ${DYNAMOLLM_CLASS_LENGTHS.map((x) => x.classId).join(",")} (or give --class-lengths)`);
    return c;
  });
}

/** `AA=100-400/20-80,BB=...`: each class's input and output token ranges. */
function ownClasses(spec: string): ClassLengths[] {
  return list(spec, "--class-lengths").map((part) => {
    const m = /^([A-Za-z0-9_-]{1,16})=(\d+)-(\d+)\/(\d+)-(\d+)$/.exec(part);
    if (!m) throw new CliError(`--class-lengths: '${part}' is not ID=IN_MIN-IN_MAX/OUT_MIN-OUT_MAX, e.g. AA=100-400/20-80`);
    const range = (lo: string, hi: string) => parsed(LengthRange, { min: Number(lo), max: Number(hi) }, `--class-lengths ${m[1]}`);
    return { classId: m[1]!, input: range(m[2]!, m[3]!), output: range(m[4]!, m[5]!) };
  });
}

function list(text: string, flag: string): string[] {
  const items = text.split(",").map((s) => s.trim()).filter(Boolean);
  if (items.length === 0) throw new CliError(`${flag} is empty`);
  return items;
}

function positiveNumber(text: string, flag: string): number {
  const n = Number(text);
  if (!(Number.isFinite(n) && n > 0)) throw new CliError(`${flag} takes positive numbers, got '${text}'`);
  return n;
}

function nonNegativeInt(text: string, flag: string): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < 0) throw new CliError(`${flag} takes GPU indices, got '${text}'`);
  return n;
}

function oneOf<T extends string>(value: string, allowed: readonly T[], flag: string): T {
  if (!(allowed as readonly string[]).includes(value)) throw new CliError(`${flag} takes ${allowed.join(", ")}, got '${value}'`);
  return value as T;
}

function parsed<T>(schema: { safeParse(x: unknown): { success: true; data: T } | { success: false; error: { issues: { message: string }[] } } }, value: unknown, flag: string): T {
  const r = schema.safeParse(value);
  if (!r.success) throw new CliError(`${flag}: ${r.error.issues[0]?.message ?? "invalid"}`);
  return r.data;
}
