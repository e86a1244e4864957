import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:http";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { Agent } from "../../host-agent/agent/agent.ts";
import { sliceBody } from "../../host-agent/applier/plan-fixtures.test-helper.ts";
import { loadAgentConfig } from "../../host-agent/config/load-agent-config.ts";
import { EngineFiles } from "../../host-agent/engines/engine-files.ts";
import { FAKE_VLLM_COMMAND, fakeEngineLog } from "../../host-agent/engines/fake-engine.test-helper.ts";
import { OrphanEngines } from "../../host-agent/engines/orphan-engines.ts";
import { installFakeNvidiaSmi, type FakeNvidiaSmi } from "../../host-agent/gpu/fake-nvidia-smi.test-helper.ts";
import { buildFakeNvml, type FakeNvml } from "../../host-agent/gpu/fake-nvml.test-helper.ts";
import { closeServer, listen } from "../../host-agent/util/http.ts";
import { runningInGroup } from "../../host-agent/util/proc-stat.ts";
import { runCli } from "../../cli/run-command.test-helper.ts";
import { startFakeEdge } from "./fake-edge.test-helper.ts";

/**
 * Crash safety with real processes on every side: `greenference agent` as a process, driving the
 * fake NVML library over FFI (its GPUs' locks and power limits kept in a file, so they outlive the
 * agent as a real GPU's do), running fake vLLM engine processes, against a fake edge. The agent is
 * SIGKILLed while the power ladder has lowered both GPUs' limits and the plan has locked a clock.
 */
const BIN = fileURLToPath(new URL("../../cli/bin.js", import.meta.url));
const SITE = "wind-k";
const TOKEN = "gfs_wind-k_c0ffee";
const CONTROL = "ctl_0123456789abcdef";
const model = "meta-llama/Llama-3.1-8B-Instruct";
/** Over this cap the ladder lowers each GPU to floor(910 / 1.82 / 2) = 250 W (both GPUs accept 250 W). */
const LOW_CAP_W = 910;
/** The fake library's state file: per GPU "lockedMin lockedMax limitMilliwatts"; 0 0 = not locked. */
const STOCK = "0 0 400000\n0 0 700000\n";

let nvml: FakeNvml;
let edge: Awaited<ReturnType<typeof startFakeEdge>>;
let dir: string;
let engineLog: ReturnType<typeof fakeEngineLog> | undefined;
const children: ChildProcess[] = [];
/** The agent's applied report for plan `version`, once the fake edge has it; polled with POLL. */
const appliedReport = (version: number) => edge.state.applied.find((a) => a.planVersion === version);
const POLL = { timeout: 30_000, interval: 50 };

beforeAll(async () => {
  nvml = buildFakeNvml();
  edge = await startFakeEdge(SITE, TOKEN);
});
afterAll(() => edge.close());
beforeEach(() => {
  edge.state.down = false;
  for (const list of [edge.state.applied, edge.state.registrations, edge.state.heartbeats]) list.length = 0;
});
afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  // A test that failed half-way may have left engines: end them through their pid files, as an agent would.
  const engines = join(dir, "state", "engines");
  if (existsSync(engines)) await (await OrphanEngines.recover({ files: new EngineFiles(engines), graceMs: 1000, log: () => undefined })).endAll();
  rmSync(dir, { recursive: true, force: true });
  engineLog?.remove();
});

function setup() {
  dir = mkdtempSync(join(tmpdir(), "agent-crash-"));
  writeFileSync(join(dir, "token"), `${TOKEN}\n`);
  const engines = (engineLog = fakeEngineLog());
  const gpuStateFile = join(dir, "fake-gpus");
  const gpus = () => (existsSync(gpuStateFile) ? readFileSync(gpuStateFile, "utf8") : STOCK);
  return { state: join(dir, "state"), gpuStateFile, gpus, token: join(dir, "token"), engines };
}
type Setup = ReturnType<typeof setup>;

/** How the agent reaches its GPUs: the fake NVML library (by default), or the fake nvidia-smi. */
interface GpuAccess {
  args: string[];
  env: Record<string, string>;
}
const fakeNvml = (s: Setup): GpuAccess => ({ args: ["--gpu", "nvml", "--nvml-library", nvml.libraryPath], env: { FAKE_NVML_STATE: s.gpuStateFile } });
const fakeSmi = (smi: FakeNvidiaSmi): GpuAccess => {
  const { FAKE_SMI_LOG, FAKE_SMI_STATE } = smi.env();
  return { args: ["--gpu", "nvidia-smi", "--nvidia-smi", smi.path], env: { FAKE_SMI_LOG: FAKE_SMI_LOG!, FAKE_SMI_STATE: FAKE_SMI_STATE! } };
};

/** `greenference agent` as a process; resolves once it prints its running line. */
async function startAgent(s: Setup, extra: string[] = [], gpus = fakeNvml(s)) {
  const args = ["agent", "--site", SITE, "--edge", edge.url, "--token-file", s.token, ...gpus.args, "--engine", "vllm", "--engine-command", FAKE_VLLM_COMMAND, "--engine-port-base", "0"];
  args.push("--state-dir", s.state, "--plan-poll-ms", "100", "--heartbeat-ms", "300", "--stop-grace-ms", "2000", "--drain-timeout-ms", "1000", "--listen", "127.0.0.1:0", ...extra);
  // Secrets the engines must not see: the control token in the agent's own variable and, under another name, the site token.
  const env = s.engines.env({ ...gpus.env, GREENFERENCE_READ_TOKEN: "read_0123456789abcdef", GREENFERENCE_CONTROL_TOKEN: CONTROL, SITE_TOKEN_COPY: TOKEN });
  const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  const out = { stdout: "", stderr: "" };
  child.stdout!.on("data", (c: Buffer) => (out.stdout += c.toString()));
  child.stderr!.on("data", (c: Buffer) => (out.stderr += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  await expect.poll(() => out.stdout.includes('"running":true') || child.exitCode !== null, { timeout: 60_000, interval: 50 }).toBe(true);
  expect(child.exitCode, out.stderr).toBeNull();
  return { child, out, exited };
}

/** The agent's `/v1/status` through its local API (the address it printed first). */
async function statusOf(agent: Awaited<ReturnType<typeof startAgent>>) {
  const url = `${JSON.parse(agent.out.stdout.split("\n")[0]!).localApi}/v1/status`;
  const response = await fetch(url, { headers: { authorization: "Bearer read_0123456789abcdef" } });
  return (await response.json()) as { applier: { source: string | null; appliedVersion: number | null }; engines: { url: string; state: string }[] };
}

/** Runs the first agent until the ladder has lowered both limits and the plan has locked GPU 1, then SIGKILLs it. */
async function crashWithEverythingChanged(s: Setup) {
  const plan = sliceBody(1, SITE, [{ id: "llama", model, gpus: [1], clock: { mode: "locked", mhz: 1200 } }]);
  plan.site!.powerCapW = LOW_CAP_W;
  edge.state.plan = plan;
  const first = await startAgent(s);
  await expect.poll(() => appliedReport(1), POLL).toMatchObject({ ok: true });
  await expect.poll(s.gpus, { timeout: 15_000, interval: 50 }).toBe("0 0 250000\n1200 1200 250000\n");
  const engine = s.engines.events().find((e) => e.event === "start")!;
  first.child.kill("SIGKILL");
  await first.exited;
  // What the crash leaves: lowered limits, a locked clock, an engine nobody drives, and the files naming them.
  expect(s.gpus()).toBe("0 0 250000\n1200 1200 250000\n");
  expect(runningInGroup(engine.pid)).toContain(engine.pid);
  expect(JSON.parse(readFileSync(join(s.state, "gpu-defaults.json"), "utf8")).gpus.map((g: { powerLimitW: number }) => g.powerLimitW)).toEqual([400, 700]);
  expect(readdirSync(join(s.state, "engines")).filter((f) => f.endsWith(".json"))).toHaveLength(1);
  return { engine };
}

describe("a host agent killed mid-run, started again", () => {
  it("puts the GPUs' limits and clocks back before anything else and ends the engine the killed run left", async () => {
    const s = setup();
    const { engine } = await crashWithEverythingChanged(s);
    edge.state.plan = null;
    const second = await startAgent(s, ["--engine-adopt-window-ms", "0"]);
    expect(s.gpus()).toBe(STOCK);
    expect(runningInGroup(engine.pid)).toEqual([]);
    expect(s.engines.events()).toContainEqual(expect.objectContaining({ pid: engine.pid, event: "signal", signal: "SIGTERM" }));
    expect(readdirSync(join(s.state, "engines")).filter((f) => f.endsWith(".json"))).toEqual([]);
    expect(second.out.stderr).toContain("an earlier run did not stop cleanly; putting every GPU back to the settings saved there");
    expect(second.out.stderr).toMatch(/ended vllm engine llama#0 \(pid \d+, port \d+, GPUs 1\) left by an earlier run \(this run does not adopt engines\): SIGTERM/);

    second.child.kill("SIGTERM");
    expect(await second.exited).toBe(0);
    expect(s.gpus()).toBe(STOCK);
    expect(readdirSync(s.state).sort()).toEqual(["engines", "plan.json"]);
  });

  it("adopts the engine the killed run left when the plan still runs it, with the limits back at their defaults", async () => {
    const s = setup();
    const { engine } = await crashWithEverythingChanged(s);
    edge.state.plan = sliceBody(2, SITE, [{ id: "llama", model, gpus: [1], clock: { mode: "locked", mhz: 1200 } }]);
    const second = await startAgent(s);
    await expect.poll(() => appliedReport(2), POLL).toMatchObject({ ok: true });
    expect(s.gpus()).toBe("0 0 400000\n1200 1200 700000\n");
    expect(s.engines.events().filter((e) => e.event === "start")).toHaveLength(1);
    expect(second.out.stderr).toMatch(new RegExp(`adopted vllm engine llama#0 \\(pid ${engine.pid}, port \\d+\\) from an earlier run`));
    const status = await statusOf(second);
    expect(status.engines).toEqual([expect.objectContaining({ state: "ready" })]);
    expect((await fetch(`${status.engines[0]!.url}/health`)).status).toBe(200);

    second.child.kill("SIGTERM");
    expect(await second.exited).toBe(0);
    expect(runningInGroup(engine.pid)).toEqual([]);
    expect(s.gpus()).toBe(STOCK);
    expect(readdirSync(s.state).sort()).toEqual(["engines", "plan.json"]);
    expect(readdirSync(join(s.state, "engines")).filter((f) => f.endsWith(".json"))).toEqual([]);
  });
});

describe("a host agent whose plan renames an instance it runs unchanged", () => {
  it("keeps the same engine process serving under the new id, rewrites its pid file, and a run started after a crash adopts it under that id", async () => {
    const s = setup();
    edge.state.plan = sliceBody(1, SITE, [{ id: "SS-tp1", model, gpus: [1], clock: { mode: "locked", mhz: 1200 } }]);
    const first = await startAgent(s);
    await expect.poll(() => appliedReport(1), POLL).toMatchObject({ ok: true });
    const engine = s.engines.events().find((e) => e.event === "start")!;

    // Another policy names the same engine (model, GPU, TP) its own way.
    edge.state.plan = sliceBody(2, SITE, [{ id: "ss-h100x1", model, gpus: [1], clock: { mode: "locked", mhz: 1005 } }]);
    await expect.poll(() => appliedReport(2), POLL).toMatchObject({ ok: true, instances: [{ id: "ss-h100x1", state: "ready" }] });
    expect(first.out.stderr).toContain("kept engine SS-tp1#0 as ss-h100x1#0");
    expect(s.engines.events().filter((e) => e.event !== "request")).toEqual([expect.objectContaining({ pid: engine.pid, event: "start" })]);
    expect(s.gpus()).toBe("0 0 400000\n1005 1005 700000\n");
    const status = (await statusOf(first)) as unknown as { engines: { instance: string; replica: number; url: string; state: string }[] };
    expect(status.engines).toEqual([expect.objectContaining({ instance: "ss-h100x1", replica: 0, state: "ready" })]);
    const answer = await fetch(`${status.engines[0]!.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }] }) });
    expect(answer.status).toBe(200);
    await answer.text();
    expect(s.engines.events().filter((e) => e.event === "request").map((e) => e.pid)).toEqual([engine.pid]);
    const pidFiles = readdirSync(join(s.state, "engines")).filter((f) => f.endsWith(".json"));
    expect(pidFiles).toHaveLength(1);
    expect(JSON.parse(readFileSync(join(s.state, "engines", pidFiles[0]!), "utf8"))).toMatchObject({ pid: engine.pid, launch: { instanceId: "ss-h100x1", replica: 0, gpus: [1] }, argv: [process.execPath, expect.stringMatching(/fake-engine\.js$/), ...engine.argv!] });

    first.child.kill("SIGKILL");
    await first.exited;
    edge.state.plan = sliceBody(3, SITE, [{ id: "ss-h100x1", model, gpus: [1], clock: { mode: "locked", mhz: 1005 } }]);
    const second = await startAgent(s);
    await expect.poll(() => appliedReport(3), POLL).toMatchObject({ ok: true });
    expect(second.out.stderr).toMatch(new RegExp(`adopted vllm engine ss-h100x1#0 \\(pid ${engine.pid}, port \\d+\\) from an earlier run`));
    expect(s.engines.events().filter((e) => e.event === "start")).toHaveLength(1);

    second.child.kill("SIGTERM");
    expect(await second.exited).toBe(0);
    expect(runningInGroup(engine.pid)).toEqual([]);
  });
});

describe("a host agent killed before it applied a plan that renames an instance it runs unchanged", () => {
  it("adopts the engine under the new id on restart, rewriting its pid file, rather than end it and start another", async () => {
    const s = setup();
    edge.state.plan = sliceBody(1, SITE, [{ id: "SS-tp1", model, gpus: [1], clock: { mode: "locked", mhz: 1200 } }]);
    const first = await startAgent(s);
    await expect.poll(() => appliedReport(1), POLL).toMatchObject({ ok: true });
    const engine = s.engines.events().find((e) => e.event === "start")!;
    // The crash comes before the rename: the pid file still names the engine by its old label.
    first.child.kill("SIGKILL");
    await first.exited;

    edge.state.plan = sliceBody(2, SITE, [{ id: "ss-h100x1", model, gpus: [1], clock: { mode: "locked", mhz: 1005 } }]);
    const second = await startAgent(s);
    await expect.poll(() => appliedReport(2), POLL).toMatchObject({ ok: true, instances: [{ id: "ss-h100x1", state: "ready" }] });
    expect(second.out.stderr).toMatch(new RegExp(`adopted vllm engine ss-h100x1#0 \\(pid ${engine.pid}, port \\d+\\) from an earlier run, where it ran as SS-tp1#0`));
    expect(second.out.stderr).not.toMatch(/ended vllm engine/);
    expect(s.engines.events().filter((e) => e.event === "start")).toHaveLength(1);
    expect(runningInGroup(engine.pid)).toContain(engine.pid);
    const pidFiles = readdirSync(join(s.state, "engines")).filter((f) => f.endsWith(".json"));
    expect(pidFiles.map((f) => JSON.parse(readFileSync(join(s.state, "engines", f), "utf8")))).toEqual([expect.objectContaining({ pid: engine.pid, launch: expect.objectContaining({ instanceId: "ss-h100x1", replica: 0 }) })]);

    second.child.kill("SIGTERM");
    expect(await second.exited).toBe(0);
    expect(runningInGroup(engine.pid)).toEqual([]);
  });
});

describe("a host agent killed while engines run on MIG slices, started again", () => {
  // The fake nvidia-smi refuses, as the real one, to destroy MIG instances a process uses.
  let smi: FakeNvidiaSmi;
  beforeEach(() => void (smi = installFakeNvidiaSmi()));
  afterEach(() => rmSync(smi.dir, { recursive: true, force: true }));
  const sliced = { id: "sliced", model, tp: 1, replicas: 2, gpus: [0, 0], mig: "3g.40gb" as const, clock: { mode: "locked" as const, mhz: 1410 } };

  /** Runs the first agent until both slice engines of GPU 0 serve, then SIGKILLs it. */
  async function crashOnSlices(s: Setup) {
    edge.state.plan = sliceBody(1, SITE, [sliced]);
    const first = await startAgent(s, [], fakeSmi(smi));
    await expect.poll(() => appliedReport(1), POLL).toMatchObject({ ok: true });
    const engines = s.engines.events().filter((e) => e.event === "start");
    expect(engines.map((e) => e.cuda)).toEqual([expect.stringMatching(/^MIG-/), expect.stringMatching(/^MIG-/)]);
    first.child.kill("SIGKILL");
    await first.exited;
    return { engines, calls: smi.calls().length };
  }

  it("adopts them when the plan still runs them, leaving the slices as they are", async () => {
    const s = setup();
    const { engines, calls } = await crashOnSlices(s);
    edge.state.plan = sliceBody(2, SITE, [sliced]);
    const second = await startAgent(s, [], fakeSmi(smi));
    await expect.poll(() => appliedReport(2), POLL).toMatchObject({ ok: true });
    expect(s.engines.events().filter((e) => e.event === "start")).toHaveLength(2);
    for (const engine of engines) expect(second.out.stderr).toMatch(new RegExp(`adopted vllm engine sliced#[01] \\(pid ${engine.pid}, port \\d+\\) from an earlier run`));
    expect(smi.calls().slice(calls).filter((c) => c.startsWith("mig") || c.includes("-mig"))).toEqual([]);
    second.child.kill("SIGTERM");
    expect(await second.exited).toBe(0);
    for (const engine of engines) expect(runningInGroup(engine.pid)).toEqual([]);
  });

  it("ends them before returning their GPU whole, which the driver refuses while they run", async () => {
    const s = setup();
    const { engines, calls } = await crashOnSlices(s);
    edge.state.plan = sliceBody(2, SITE, [{ id: "whole", model, gpus: [0] }]);
    const second = await startAgent(s, [], fakeSmi(smi));
    await expect.poll(() => appliedReport(2), POLL).toMatchObject({ ok: true });
    for (const engine of engines) expect(runningInGroup(engine.pid)).toEqual([]);
    expect(second.out.stderr).toMatch(/ended vllm engine sliced#0 \(pid \d+, port \d+, GPUs 0\) left by an earlier run \(its GPUs' MIG layout is to change\): SIGTERM/);
    expect(smi.calls().slice(calls)).toEqual(expect.arrayContaining(["mig -i 0 -dci", "mig -i 0 -dgi", "-i 0 -mig 0"]));
    expect(s.engines.events().filter((e) => e.event === "start").at(-1)).toMatchObject({ cuda: "0" });
    second.child.kill("SIGTERM");
    expect(await second.exited).toBe(0);
  });
});

describe("a host agent killed mid-run, started again while the edge is down", () => {
  it("applies the plan the killed run kept, adopting its engine, and follows the edge's plan once the edge answers", async () => {
    const s = setup();
    const { engine } = await crashWithEverythingChanged(s);
    edge.state.down = true;
    const adoptWindowMs = 5000;
    const second = await startAgent(s, ["--engine-adopt-window-ms", String(adoptWindowMs)]);
    const startedAt = Date.now();
    await expect.poll(() => second.out.stderr, { timeout: 30_000, interval: 50 }).toMatch(new RegExp(`adopted vllm engine llama#0 \\(pid ${engine.pid}, port \\d+\\) from an earlier run`));
    expect(second.out.stderr).toMatch(/the edge cannot be reached \(.*edge is down\); applying plan 1 that the last run kept in .*\/plan\.json \(from the edge, \d+ s ago\) until it answers/);
    await expect.poll(async () => (await statusOf(second)).applier, { timeout: 10_000, interval: 100 }).toMatchObject({ source: "stored", appliedVersion: 1 });
    // Past the adoption window the engine still runs: the kept plan claimed it.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, startedAt + adoptWindowMs + 500 - Date.now())));
    expect(runningInGroup(engine.pid)).toContain(engine.pid);
    expect(second.out.stderr).not.toMatch(/ended vllm engine/);

    edge.state.down = false;
    const reports = edge.state.applied.length;
    await expect.poll(() => edge.state.applied.slice(reports), { timeout: 30_000, interval: 50 }).toContainEqual(expect.objectContaining({ planVersion: 1, ok: true }));
    expect((await statusOf(second)).applier).toMatchObject({ source: "edge", appliedVersion: 1 });
    expect(s.engines.events().filter((e) => e.event === "start")).toHaveLength(1);

    second.child.kill("SIGTERM");
    expect(await second.exited).toBe(0);
  });
});

describe("the agent's state dir", () => {
  it("is let go of when the agent cannot start, so a second try can take it", async () => {
    const s = setup();
    const blocker = createServer();
    const taken = await listen(blocker, "127.0.0.1", 0);
    const flags = { site: SITE, edge: edge.url, token: TOKEN, gpu: "sim", engine: "sim", simGpus: "1", stateDir: s.state, readToken: "read_0123456789abcdef", controlToken: CONTROL };
    try {
      await expect(Agent.start(loadAgentConfig({ flags: { ...flags, listen: new URL(taken).host } }), { log: () => undefined })).rejects.toThrow(/EADDRINUSE/);
      expect(readdirSync(s.state)).not.toContain("agent.lock");
      const agent = await Agent.start(loadAgentConfig({ flags: { ...flags, listen: "127.0.0.1:0" } }), { log: () => undefined });
      expect(readdirSync(s.state)).toContain("agent.lock");
      await agent.stop();
    } finally {
      await closeServer(blocker);
    }
  });
});

describe("the agent's secrets", () => {
  it("reaches engines in no variable, and shows on no command line when given as a file or in the environment", async () => {
    const s = setup();
    edge.state.plan = sliceBody(3, SITE, [{ id: "llama", model, gpus: [0], clock: { mode: "locked", mhz: 1200 } }]);
    const agent = await startAgent(s);
    await expect.poll(() => appliedReport(3), POLL).toMatchObject({ ok: true });
    expect(edge.state.registrations.length).toBeGreaterThan(0);
    const [start] = s.engines.events().filter((e) => e.event === "start");
    expect(start!.env).toContain("FAKE_ENGINE_LOG");
    expect(start!.env).toContain("CUDA_VISIBLE_DEVICES");
    expect(start!.env!.filter((name) => name.startsWith("GREENFERENCE_") || name === "SITE_TOKEN_COPY")).toEqual([]);
    const commandLine = readFileSync(`/proc/${agent.child.pid}/cmdline`, "utf8");
    for (const secret of [TOKEN, CONTROL]) expect(commandLine).not.toContain(secret);
    expect(agent.out.stderr).not.toContain("warning");
    agent.child.kill("SIGTERM");
    expect(await agent.exited).toBe(0);
  });

  it("still takes a token as a flag, with one warning", async () => {
    const r = await runCli(["agent", "--site", SITE, "--edge", edge.url, "--token", TOKEN, "--gpu", "sim", "--engine", "sim", "--print-config"]);
    expect(r.code).toBe(0);
    expect(r.err).toEqual(["greenference agent: warning: --token on the command line can be read by any user with ps; use --token-file or GREENFERENCE_TOKEN instead"]);
  });
});
