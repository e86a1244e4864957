import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../cli/run-command.test-helper.ts";
import { buildFakeNvml, type FakeNvml } from "../../host-agent/gpu/fake-nvml.test-helper.ts";
import { ProfileTable } from "../../src/core/schemas/profile.ts";

const SIM_ENGINE = fileURLToPath(new URL("../../host-agent/sim-engine/main.ts", import.meta.url));
const MEASURED_FIXTURE = fileURLToPath(new URL("../worker/fixtures/measured-profile-m-h100.json", import.meta.url));
let dir: string;
beforeAll(() => void (dir = mkdtempSync(join(tmpdir(), "agent-profile-"))));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const readTable = (path: string) => ProfileTable.parse(JSON.parse(readFileSync(path, "utf8")));

describe("greenference agent profile on simulated engines and GPUs", () => {
  const args = (out: string, requests = "8") => ["agent", "profile", "--model", "llama3.1-8b", "--engine", "sim", "--gpu", "sim", "--gpu-type", "A100-80GB", "--sim-speed", "4", "--clocks", "1410", "--classes", "LL", "--loads", "0.3,0.6", "--requests", requests, "--out", out, "--json"];

  it("measures every point into a profile table, and a second run continues a partial file where it stopped", async () => {
    const out = join(dir, "sim.json");
    const first = await runCli(args(out));
    expect(first.code).toBe(0);
    expect(first.last()).toMatchObject({ file: out, complete: true, rows: 2, measured: 2, resumed: 0, gpu: "A100-80GB", clocks: [1410], classes: ["LL"], engine: { engine: "sim", simulated: true } });
    const table = readTable(out);
    expect(table.source).toMatchObject({ kind: "measured", details: { complete: true, points: 2 } });
    for (const row of table.rows) {
      expect(row).toMatchObject({ model: "llama3.1-8b", gpu: "A100-80GB", tp: 1, mhz: 1410, classId: "LL" });
      expect(row.ttftMs.p99).toBeGreaterThanOrEqual(row.ttftMs.p50);
      expect(row.e2eMs.p50).toBeGreaterThan(row.ttftMs.p50);
      expect(row.avgPowerW).toBeGreaterThan(0);
      expect(row.peakPowerW).toBeGreaterThanOrEqual(row.avgPowerW);
      expect(row.energyPerRequestJ).toBeGreaterThan(0);
    }
    // An interrupted run: the file holds the first point only.
    writeFileSync(out, JSON.stringify({ ...table, source: { ...table.source, details: { ...table.source.details, complete: false } }, rows: table.rows.slice(0, 1) }));
    const second = await runCli(args(out));
    expect(second.last()).toMatchObject({ complete: true, rows: 2, measured: 1, resumed: 1 });
    expect(readTable(out).rows[0]).toEqual(table.rows[0]);
  });

  it("refuses to continue a file made for another grid, and answers bad flags with the reason", async () => {
    const out = join(dir, "other.json");
    expect((await runCli(args(out, "6"))).code).toBe(0);
    const again = await runCli(args(out, "7"));
    expect(again.code).not.toBe(0);
    expect(again.err.join("\n")).toMatch(/holds a profile of another grid/);
    const unknown = await runCli(["agent", "profile", "--model", "my-model", "--engine", "sim", "--gpu", "sim", "--out", join(dir, "x.json")]);
    expect(unknown.err.join("\n")).toMatch(/--rates is required for a model the performance model does not know/);
    const both = await runCli(["agent", "profile", "--model", "llama3.1-8b", "--engine", "sim", "--engine-url", "http://127.0.0.1:1", "--out", join(dir, "y.json")]);
    expect(both.err.join("\n")).toMatch(/not both/);
  });
});

describe("greenference agent profile on an engine already running, GPUs through NVML (the fake library)", () => {
  let engine: ChildProcess;
  let url: string;
  let fake: FakeNvml;

  beforeAll(async () => {
    fake = buildFakeNvml();
    engine = spawn(process.execPath, ["--import", "tsx", SIM_ENGINE, "--model", "llama3.1-8b", "--served-model-name", "m", "--port", "0", "--gpu-type", "H100-80GB"], { stdio: ["ignore", "pipe", "inherit"] });
    url = await new Promise<string>((resolve, reject) => {
      engine.stdout!.once("data", (d: Buffer) => resolve((JSON.parse(d.toString()) as { url: string }).url));
      engine.once("exit", (code) => reject(new Error(`sim engine exited with ${code}`)));
    });
  });
  afterAll(() => void engine?.kill("SIGTERM"));

  it("locks each clock through NVML, reads power and energy, writes rows for the fleet's model on the GPU's type, and resets the clocks", async () => {
    const out = join(dir, "nvml.json");
    fake.clearLog();
    // The same command wrote test/worker/fixtures/measured-profile-m-h100.json, which the worker tests upload and plan on.
    const r = await runCli(["agent", "profile", "--model", "m", "--perf-model", "llama3.1-8b", "--engine-url", url, "--gpu", "nvml", "--nvml-library", fake.libraryPath, "--gpus", "1", "--class-lengths", "AA=64-256/8-32", "--clocks", "1410,1980", "--rates", "1,2", "--requests", "8", "--out", out, "--json"]);
    expect(r.code).toBe(0);
    expect(r.last()).toMatchObject({ complete: true, rows: 4, gpu: "H100-80GB", clocks: [1410, 1980], classes: ["AA"], loads_rps: [1, 2], engine: { engine: "url", engineUrl: url, gpuBackend: "fallback" } });
    const table = readTable(out);
    expect(table.rows.map((row) => [row.model, row.gpu, row.tp, row.mhz, row.classId, row.loadRps])).toEqual([
      ["m", "H100-80GB", 1, 1410, "AA", 1],
      ["m", "H100-80GB", 1, 1410, "AA", 2],
      ["m", "H100-80GB", 1, 1980, "AA", 1],
      ["m", "H100-80GB", 1, 1980, "AA", 2],
    ]);
    // The fake H100 draws more at a higher locked clock, and the profile saw it.
    expect(table.rows[2]!.peakPowerW).toBeGreaterThan(table.rows[0]!.peakPowerW);
    for (const row of table.rows) expect(row.energyPerRequestJ).toBeGreaterThan(0);
    const calls = fake.calls();
    expect(calls).toContain("nvmlDeviceSetGpuLockedClocks 1 1410 1410");
    expect(calls).toContain("nvmlDeviceSetGpuLockedClocks 1 1980 1980");
    expect(calls.filter((c) => c.startsWith("nvmlDeviceGetTotalEnergyConsumption 1")).length).toBeGreaterThanOrEqual(8);
    expect(calls.at(-2)).toBe("nvmlDeviceResetGpuLockedClocks 1");
    const fixture = readTable(MEASURED_FIXTURE);
    expect(fixture.rows.map((row) => [row.model, row.gpu, row.mhz, row.classId, row.loadRps])).toEqual(table.rows.map((row) => [row.model, row.gpu, row.mhz, row.classId, row.loadRps]));
  });
});
