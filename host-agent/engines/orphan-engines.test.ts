import { spawn } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { readProcStat, runningInGroup } from "../util/proc-stat.ts";
import { EngineFiles, type EnginePidRecord } from "./engine-files.ts";
import { vllmFlavor } from "./engine-flavors.ts";
import type { Engine, EngineLaunch } from "./engine.ts";
import { FAKE_VLLM_COMMAND, fakeEngineLog } from "./fake-engine.test-helper.ts";
import { OrphanEngines } from "./orphan-engines.ts";
import { ProcessEngineDriver } from "./process-engine-driver.ts";

// Engines of an "earlier run" are started by one driver and left running; a second driver, given
// the orphans found through the pid files, plays the restarted agent. Every process is real.
const big: EngineLaunch = { instanceId: "big", replica: 0, model: "meta-llama/Llama-2-70b-hf", variant: "base", tp: 2, gpus: [2, 3], role: "mixed" };
const small: EngineLaunch = { instanceId: "small", replica: 0, model: "meta-llama/Llama-3.1-8B-Instruct", variant: "base", tp: 1, gpus: [0], role: "mixed" };
const log = fakeEngineLog();
const started: Engine[] = [];
const messages: string[] = [];

function driver(files: EngineFiles, orphans?: OrphanEngines, env: Record<string, string> = {}, command = FAKE_VLLM_COMMAND) {
  const d = new ProcessEngineDriver({ flavor: vllmFlavor, command, host: "127.0.0.1", portBase: 0, env: log.env(env), files, orphans, startTimeoutMs: 10_000, stopGraceMs: 2000, pollMs: 50, log: (m) => messages.push(m) });
  return async (launch: EngineLaunch) => {
    const engine = d.create(launch, () => undefined);
    started.push(engine);
    await engine.start();
    return engine;
  };
}
const recover = (files: EngineFiles, graceMs = 2000) => OrphanEngines.recover({ files, graceMs, pollMs: 50, log: (m) => messages.push(m) });
const startsOf = (pid?: number) => log.events().filter((e) => e.event === "start" && (pid === undefined || e.pid === pid));

/** Whether an engine started (other than those started before) while `old`'s process group still ran, watched until `until` settles. */
async function startedBeside(old: number, until: Promise<unknown>): Promise<boolean> {
  const before = new Set(startsOf().map((e) => e.pid));
  let settled = false;
  void until.finally(() => (settled = true)).catch(() => undefined);
  while (!settled) {
    if (startsOf().some((e) => !before.has(e.pid)) && runningInGroup(old).length > 0) return true;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return false;
}

afterEach(async () => {
  await Promise.all(started.splice(0).map((e) => e.stop()));
  messages.length = 0;
});
afterAll(() => log.remove());

describe("OrphanEngines: engines an earlier agent run left", () => {
  it("adopts the one a launch matches exactly, ends the one whose GPUs another launch wants", async () => {
    const files = new EngineFiles(join(log.dir, "adopt"));
    const earlier = driver(files);
    const [bigBefore, smallBefore] = [await earlier(big), await earlier(small)];
    const [bigPid, smallPid] = [startsOf().at(-2)!.pid, startsOf().at(-1)!.pid];

    const orphans = await recover(files);
    expect(orphans.size).toBe(2);
    const now = driver(files, orphans);
    const adopted = await now(big);
    expect(adopted.url).toBe(bigBefore.url);
    expect(adopted.state).toBe("ready");
    expect(startsOf(bigPid)).toHaveLength(1);
    expect(startsOf()).toHaveLength(2);
    expect((await fetch(`${adopted.url}/v1/chat/completions`, { method: "POST", body: "{}" })).status).toBe(200);
    expect(messages).toContainEqual(expect.stringMatching(/^adopted vllm engine big#0 \(pid \d+, port \d+\) from an earlier run$/));

    const other = await now({ ...small, model: "Qwen/Qwen2.5-7B-Instruct" });
    expect(runningInGroup(smallPid)).toEqual([]);
    expect(log.events()).toContainEqual(expect.objectContaining({ pid: smallPid, event: "signal", signal: "SIGTERM" }));
    expect(other.url).not.toBe(smallBefore.url);
    expect(orphans.size).toBe(0);

    await adopted.stop();
    await expect.poll(() => runningInGroup(bigPid), { timeout: 5000, interval: 50 }).toEqual([]);
    expect(files.readPids().records.map((r) => r.launch.model)).toEqual(["Qwen/Qwen2.5-7B-Instruct"]);
  });

  it("adopts an engine on a MIG slice when the plan runs the same slice", async () => {
    const files = new EngineFiles(join(log.dir, "mig"));
    const sliced: EngineLaunch = { ...small, instanceId: "sliced", replica: 1, mig: { profile: "3g.40gb", slot: 1 }, migDevice: "MIG-fa4e0100-0000-5000-8000-000000000001" };
    const before = await driver(files)(sliced);
    const pid = startsOf().at(-1)!.pid;
    expect(files.readPids().records.map((r) => r.launch)).toEqual([sliced]);

    const adopted = await driver(files, await recover(files))(sliced);
    expect(adopted.url).toBe(before.url);
    expect(startsOf(pid)).toHaveLength(1);
    expect(messages).toContainEqual(`adopted vllm engine sliced#1 (pid ${pid}, port ${new URL(before.url!).port}) from an earlier run`);
  });

  // The earlier run died before it applied a plan that renamed the engine: its pid file has the old label.
  it("adopts an engine under another label when the launch matches it but for that label, and rewrites its pid file", async () => {
    const files = new EngineFiles(join(log.dir, "relabelled"));
    const before = await driver(files)(big);
    const pid = startsOf().at(-1)!.pid;
    const port = new URL(before.url!).port;

    const orphans = await recover(files);
    const adopted = await driver(files, orphans)({ ...big, instanceId: "ll70-h100x2", replica: 3 });
    expect(adopted.url).toBe(before.url);
    expect(adopted.state).toBe("ready");
    expect(startsOf(pid)).toHaveLength(1);
    expect(runningInGroup(pid)).toContain(pid);
    expect(messages).toContainEqual(`adopted vllm engine ll70-h100x2#3 (pid ${pid}, port ${port}) from an earlier run, where it ran as big#0`);
    expect(files.readPids().records).toEqual([expect.objectContaining({ pid, launch: { ...big, instanceId: "ll70-h100x2", replica: 3 } })]);
    // A run after another crash (this one's engine left running) adopts it under the new label.
    const again = await driver(files, await recover(files))({ ...big, instanceId: "ll70-h100x2", replica: 3 });
    expect(again.url).toBe(before.url);
    expect(messages).toContainEqual(`adopted vllm engine ll70-h100x2#3 (pid ${pid}, port ${port}) from an earlier run`);
    expect(startsOf(pid)).toHaveLength(1);
  });

  it.each([
    { case: "another model", launch: { ...small, instanceId: "other", model: "Qwen/Qwen2.5-7B-Instruct" } },
    { case: "other weights", launch: { ...small, instanceId: "other", weights: "/models/llama-8b-ft" } },
    { case: "another role", launch: { ...small, instanceId: "other", role: "prefill" as const } },
    { case: "another GPU", launch: { ...small, instanceId: "other", gpus: [1] } },
  ])("does not adopt one under another label that differs in more than the label: $case", async ({ launch }) => {
    const files = new EngineFiles(join(log.dir, `not-relabelled-${launch.model}-${launch.role}-${launch.gpus}-${launch.weights}`.replace(/\//g, "_")));
    await driver(files)(small);
    const pid = startsOf().at(-1)!.pid;
    const orphans = await recover(files);
    await driver(files, orphans)(launch);
    await orphans.endAll();
    expect(runningInGroup(pid)).toEqual([]);
    expect(messages.filter((m) => m.startsWith("adopted"))).toEqual([]);
    expect(startsOf().at(-1)!.pid).not.toBe(pid);
  });

  it("adopts an engine whose command uses {replica} under another instance id, but not under another replica number (it would run another argv)", async () => {
    const files = new EngineFiles(join(log.dir, "replica-template"));
    const command = `${FAKE_VLLM_COMMAND} --log-file /tmp/engine-{replica}.log`;
    await driver(files, undefined, {}, command)(small);
    const pid = startsOf().at(-1)!.pid;
    await driver(files, await recover(files), {}, command)({ ...small, instanceId: "renamed" });
    expect(startsOf(pid)).toHaveLength(1);
    expect(messages).toContainEqual(expect.stringMatching(new RegExp(`^adopted vllm engine renamed#0 \\(pid ${pid}, .* where it ran as small#0$`)));

    const orphans = await recover(files);
    const renumbered = await driver(files, orphans, {}, command)({ ...small, instanceId: "renamed", replica: 1 });
    expect(runningInGroup(pid)).toEqual([]);
    expect(messages).toContainEqual(expect.stringMatching(new RegExp(`^ended vllm engine renamed#0 \\(pid ${pid}, .*\\(its GPUs are wanted by a launch it does not match\\): SIGTERM$`)));
    expect(startsOf().at(-1)!.argv).toContain("/tmp/engine-1.log");
    expect(renumbered.state).toBe("ready");
  });

  // The old engine ignores SIGTERM (as vLLM can take long to shut down), so it lives the whole grace period.
  const sliceOf = (replica: number): EngineLaunch => ({ ...small, instanceId: "sliced", replica, gpus: [2], mig: { profile: "3g.40gb", slot: replica } });
  it.each([
    { case: "two launches each on one GPU of a TP2 engine", launches: [{ ...small, instanceId: "a", gpus: [2] }, { ...small, instanceId: "b", gpus: [3] }], endAll: false },
    { case: "two MIG replicas on one GPU of it", launches: [sliceOf(0), sliceOf(1)], endAll: false },
    { case: "a launch while the adoption window's end is ending it", launches: [{ ...small, gpus: [3] }], endAll: true },
  ])("starts no engine beside an old one being ended on its GPUs: $case", async ({ launches, endAll }) => {
    const files = new EngineFiles(join(log.dir, `ending-${launches.length}-${endAll}`));
    await driver(files, undefined, { FAKE_ENGINE_IGNORE_SIGTERM: "1" })(big);
    const old = startsOf().at(-1)!.pid;
    const orphans = await recover(files, 1000);
    const now = driver(files, orphans);
    if (endAll) void orphans.endAll("not adopted within 0 ms");
    const starting = Promise.all(launches.map(now));
    // Both awaited before asserting, so that engines started late are stopped after the test even when it fails.
    const [beside] = await Promise.all([startedBeside(old, starting), starting]);
    expect(beside).toBe(false);
    expect(runningInGroup(old)).toEqual([]);
    expect(messages).toContainEqual(expect.stringMatching(new RegExp(`^ended vllm engine big#0 \\(pid ${old}, .*: SIGKILL after SIGTERM$`)));
  });

  it("spawns nothing for a start stopped while it waits for an old engine on its GPUs to end", async () => {
    const files = new EngineFiles(join(log.dir, "stopped-waiting"));
    await driver(files, undefined, { FAKE_ENGINE_IGNORE_SIGTERM: "1" })(big);
    const old = startsOf().at(-1)!.pid;
    const startsBefore = startsOf().length;
    const orphans = await recover(files, 1000);
    const engine = new ProcessEngineDriver({ flavor: vllmFlavor, command: FAKE_VLLM_COMMAND, host: "127.0.0.1", portBase: 0, env: log.env(), files, orphans, startTimeoutMs: 10_000, stopGraceMs: 2000, pollMs: 50 }).create({ ...small, gpus: [3] }, () => undefined);
    started.push(engine);
    const starting = engine.start();
    await expect.poll(() => log.events().some((e) => e.pid === old && e.event === "signal"), { timeout: 5000, interval: 20 }).toBe(true);
    const t0 = Date.now();
    await engine.stop();
    await expect(starting).rejects.toThrow("vllm small#0 was stopped while starting; no engine was started");
    expect(Date.now() - t0).toBeLessThan(500);
    // The old engine is still ended; once it has gone, no new one has started after it.
    await expect.poll(() => runningInGroup(old), { timeout: 5000, interval: 50 }).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(startsOf()).toHaveLength(startsBefore);
    expect(files.readPids().records).toEqual([]);
  });

  it("ends an engine it was adopting when stopped meanwhile, and starts none in its place", async () => {
    const files = new EngineFiles(join(log.dir, "stopped-adopting"));
    await driver(files)(small);
    const old = startsOf().at(-1)!.pid;
    const startsBefore = startsOf().length;
    const orphans = await recover(files);
    // Hung (SIGSTOP), it does not answer, so the adoption waits on its health check.
    process.kill(old, "SIGSTOP");
    const engine = new ProcessEngineDriver({ flavor: vllmFlavor, command: FAKE_VLLM_COMMAND, host: "127.0.0.1", portBase: 0, env: log.env(), files, orphans, startTimeoutMs: 10_000, stopGraceMs: 300, pollMs: 50 }).create(small, () => undefined);
    started.push(engine);
    const starting = engine.start();
    await new Promise((resolve) => setTimeout(resolve, 200));
    await engine.stop();
    await expect(starting).rejects.toThrow("vllm small#0 was stopped while starting; no engine was started");
    expect(runningInGroup(old)).toEqual([]);
    expect(startsOf()).toHaveLength(startsBefore);
  });

  it("ends those no launch adopts once the adoption window has passed", async () => {
    const files = new EngineFiles(join(log.dir, "window"));
    await driver(files)(small);
    const pid = startsOf().at(-1)!.pid;
    const orphans = await recover(files);
    orphans.endAllAfter(200);
    await expect.poll(() => messages.find((m) => m.startsWith("ended")), { timeout: 5000, interval: 50 }).toMatch(new RegExp(`^ended vllm engine small#0 \\(pid ${pid}, port \\d+, GPUs 0\\) left by an earlier run \\(not adopted within 200 ms\\): SIGTERM$`));
    expect(runningInGroup(pid)).toEqual([]);
    expect(files.readPids().records).toEqual([]);
  });

  it("forgets a pid file whose process has ended or whose pid now names another process, signalling nothing", async () => {
    const files = new EngineFiles(join(log.dir, "stale"));
    const ended = spawn(process.execPath, ["-e", ""]);
    const endedPid = ended.pid!;
    const endedStart = readProcStat(endedPid)!.startTime;
    await new Promise((resolve) => ended.once("exit", resolve));
    const record = (pid: number, processStartTime: number, port: number): EnginePidRecord => ({ pid, processStartTime, startedAtMs: 0, kind: "vllm", launch: { ...small, gpus: [0] }, host: "127.0.0.1", port, argv: ["vllm"] });
    files.writePid(record(endedPid, endedStart, 9001));
    // This test process stands in for an unrelated process that got the engine's pid.
    files.writePid(record(process.pid, readProcStat(process.pid)!.startTime + 1, 9002));
    const orphans = await recover(files);
    expect(orphans.size).toBe(0);
    expect(files.readPids().records).toEqual([]);
    expect(messages.filter((m) => m.startsWith("ended"))).toEqual([]);
  });

  /** Cuts the engine's pid file short just after `field`'s value (inside the next one), as a crash mid-write on a bad disk may leave it. */
  function cutShort(files: EngineFiles, port: number, field: string): string {
    const path = join(files.dir, `${port}.json`);
    const text = readFileSync(path, "utf8");
    writeFileSync(path, text.slice(0, text.indexOf(",", text.indexOf(`"${field}"`)) + 6));
    return path;
  }

  it("ends the engine of a pid file cut short after its pid and start time, and no process that got its pid since", async () => {
    const files = new EngineFiles(join(log.dir, "cut"));
    const engine = await driver(files)(small);
    const { pid } = startsOf().at(-1)!;
    const path = cutShort(files, Number(new URL(engine.url!).port), "processStartTime");
    // This test process stands in for an unrelated process that got an engine's pid.
    writeFileSync(join(files.dir, "9006.json"), `{"pid":${process.pid},"processStartTime":${readProcStat(process.pid)!.startTime + 1},"star`);

    const orphans = await recover(files);
    expect(runningInGroup(pid)).toEqual([]);
    expect(log.events()).toContainEqual(expect.objectContaining({ pid, event: "signal", signal: "SIGTERM" }));
    expect(messages).toContainEqual(`ended the engine of unreadable pid file ${path} (pid ${pid}, port ${new URL(engine.url!).port}) left by an earlier run (its pid file cannot be read whole, so it cannot be adopted): SIGTERM`);
    expect(messages).toContainEqual(`removed unreadable pid file ${join(files.dir, "9006.json")}: pid ${process.pid} no longer runs the process it named`);
    expect(readdirSync(files.dir).filter((f) => f.includes(".json"))).toEqual([]);
    expect(orphans.size).toBe(0);
  });

  it("sets a pid file cut short before its start time aside, with a warning, and keeps new engines off its port", async () => {
    const files = new EngineFiles(join(log.dir, "aside"));
    const engine = await driver(files)(small);
    const { pid } = startsOf().at(-1)!;
    const port = Number(new URL(engine.url!).port);
    const path = cutShort(files, port, "pid");

    const orphans = await recover(files);
    expect(runningInGroup(pid)).toContain(pid);
    expect(log.events().filter((e) => e.pid === pid && e.event === "signal")).toEqual([]);
    const aside = readdirSync(files.dir).filter((f) => f.includes(".json"));
    expect(aside).toEqual([expect.stringMatching(new RegExp(`^${port}\\.json\\.unreadable-\\d+$`))]);
    expect(messages).toContainEqual(`warning: ${path} is not an engine pid file this agent can read, and gives no pid and start time to find its engine by; kept as ${join(files.dir, aside[0]!)}. An engine it named may still run unseen, holding GPUs and port ${port}: find it and end it`);
    expect(orphans.holds(port)).toBe(true);
    expect((await recover(files)).holds(port)).toBe(false);
  });

  it("ends the workers of an engine whose leader has died", async () => {
    const files = new EngineFiles(join(log.dir, "workers"));
    // The leader starts a "TP worker" in its process group and exits.
    const leader = spawn("sh", ["-c", "sleep 60 & echo started"], { detached: true, stdio: ["ignore", "pipe", "ignore"] });
    const pid = leader.pid!;
    const startTime = readProcStat(pid)!.startTime;
    await new Promise((resolve) => leader.once("exit", resolve));
    expect(runningInGroup(pid)).toHaveLength(1);
    files.writePid({ pid, processStartTime: startTime, startedAtMs: 0, kind: "vllm", launch: { ...big, gpus: [2, 3] }, host: "127.0.0.1", port: 9003, argv: ["vllm"] });
    const orphans = await recover(files);
    expect(orphans.size).toBe(0);
    expect(runningInGroup(pid)).toEqual([]);
    expect(files.readPids().records).toEqual([]);
    expect(messages).toContainEqual(expect.stringMatching(/its leader has ended; ending the rest of its process group\): SIGTERM$/));
  });
});
