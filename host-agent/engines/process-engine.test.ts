import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readProcStat } from "../util/proc-stat.ts";
import { EngineFiles } from "./engine-files.ts";
import { FAKE_ENGINE, FAKE_VLLM_COMMAND, fakeEngineLog, LOST_PORT_ENGINE } from "./fake-engine.test-helper.ts";
import { sglangFlavor, vllmFlavor } from "./engine-flavors.ts";
import type { Engine, EngineLaunch } from "./engine.ts";
import { ProcessEngineDriver, type ProcessDriverOptions } from "./process-engine-driver.ts";
import { ProcessEngine } from "./process-engine.ts";
import { freePort } from "../util/free-port.ts";
import { closeServer, listen } from "../util/http.ts";

const launch: EngineLaunch = { instanceId: "llama-tp2", replica: 0, model: "llama-70b", servedName: "llama-70b", weights: "meta-llama/Llama-2-70b-hf", variant: "base", tp: 2, gpus: [2, 3], role: "mixed" };
const started: Engine[] = [];
const logs: ReturnType<typeof fakeEngineLog>[] = [];

function driverWith(env: Record<string, string> = {}, flavor = vllmFlavor, overrides: Partial<Pick<ProcessDriverOptions, "startTimeoutMs" | "stopGraceMs" | "liveness" | "loadHoldMs" | "log">> = {}) {
  const log = fakeEngineLog();
  logs.push(log);
  const files = new EngineFiles(join(log.dir, "engines"));
  const driver = new ProcessEngineDriver({ flavor, command: FAKE_VLLM_COMMAND, host: "127.0.0.1", portBase: 0, env: log.env({ FAKE_ENGINE_FLAVOR: flavor.kind, ...env }), files, startTimeoutMs: 10_000, stopGraceMs: 2_000, pollMs: 50, ...overrides });
  const exits: string[] = [];
  const make = (l = launch) => {
    const engine = driver.create(l, (_e, why) => exits.push(why));
    started.push(engine);
    return engine;
  };
  return { log, make, exits, files };
}

afterEach(async () => {
  await Promise.all(started.splice(0).map((e) => e.stop()));
  for (const log of logs.splice(0)) log.remove();
});

describe("ProcessEngine's command under another label", () => {
  it("takes any label while its command does not use {replica}, and only its own replica number while it does", () => {
    const log = fakeEngineLog();
    logs.push(log);
    const engine = (command: string) => new ProcessEngine(launch, { flavor: vllmFlavor, command, host: "127.0.0.1", port: 8100, env: {}, files: new EngineFiles(join(log.dir, "engines")), startTimeoutMs: 1, stopGraceMs: 1, onExit: () => undefined });
    expect(engine(FAKE_VLLM_COMMAND).canTakeLabel("ll70-h100x2", 3)).toBe(true);
    const perReplica = engine(`${FAKE_VLLM_COMMAND} --log-file /var/log/vllm-{replica}.log`);
    expect(perReplica.argv.at(-1)).toBe("/var/log/vllm-0.log");
    expect(perReplica.canTakeLabel("ll70-h100x2", 0)).toBe(true);
    expect(perReplica.canTakeLabel("llama-tp2", 1)).toBe(false);
  });
});

describe("ProcessEngine's command for a prefill or decode replica", () => {
  /** `kvHandoffArgs` null: the handoff is off. */
  const argvOf = (role: EngineLaunch["role"], kvHandoffArgs: string | null | undefined = vllmFlavor.kvHandoffArgs, flavor = vllmFlavor) => {
    const log = fakeEngineLog();
    logs.push(log);
    const engine = new ProcessEngine({ ...launch, role }, { flavor, host: "127.0.0.1", port: 8100, env: {}, files: new EngineFiles(join(log.dir, "engines")), startTimeoutMs: 1, stopGraceMs: 1, onExit: () => undefined, ...(typeof kvHandoffArgs === "string" ? { kvHandoffArgs } : {}) });
    return { argv: engine.argv, kvHandoff: engine.kvHandoff };
  };

  it("adds vLLM's KV connector to prefill and decode replicas only, when the handoff is on, so the gateway can hand KV between them", () => {
    const connector = ["--kv-transfer-config", '{"kv_connector":"NixlConnector","kv_role":"kv_both"}'];
    for (const role of ["prefill", "decode"] as const) expect(argvOf(role)).toEqual({ argv: [...argvOf("mixed").argv, ...connector], kvHandoff: "kv-transfer-params" });
    expect(argvOf("mixed")).toEqual({ argv: argvOf("mixed", null).argv, kvHandoff: undefined });
    expect(argvOf("mixed").argv).not.toContain("--kv-transfer-config");
  });

  it("starts SGLang replicas in their role's disaggregation mode, a prefill replica's bootstrap server on its own side-channel port", () => {
    const sglang = (role: EngineLaunch["role"], kvSideChannel?: { slot: number; base: number }) => {
      const log = fakeEngineLog();
      logs.push(log);
      const engine = new ProcessEngine({ ...launch, role }, { flavor: sglangFlavor, kvHandoffArgs: sglangFlavor.kvHandoffArgs, host: "10.0.0.5", port: 8100, env: {}, files: new EngineFiles(join(log.dir, "engines")), startTimeoutMs: 1, stopGraceMs: 1, onExit: () => undefined, ...(kvSideChannel ? { kvSideChannel } : {}) });
      return { tail: engine.argv.slice(-4), kvHandoff: engine.kvHandoff, kvBootstrap: engine.kvBootstrap };
    };
    expect(sglang("prefill", { slot: 2, base: 5600 })).toEqual({ tail: ["--disaggregation-mode", "prefill", "--disaggregation-bootstrap-port", "5632"], kvHandoff: "bootstrap", kvBootstrap: { host: "10.0.0.5", port: 5632 } });
    expect(sglang("decode", { slot: 1, base: 5600 })).toMatchObject({ tail: ["--disaggregation-mode", "decode", "--disaggregation-bootstrap-port", "5616"], kvHandoff: "bootstrap", kvBootstrap: undefined });
    // Without a side-channel block (free ports picked in tests) a prefill replica has no bootstrap server to name.
    expect(sglang("prefill").kvBootstrap).toBeUndefined();
    expect(argvOf("mixed", sglangFlavor.kvHandoffArgs, sglangFlavor).argv).not.toContain("--disaggregation-mode");
  });

  it("adds nothing while the handoff is off, and takes an operator's words", () => {
    expect(argvOf("decode", null)).toEqual({ argv: argvOf("mixed").argv, kvHandoff: undefined });
    expect(argvOf("decode", null, sglangFlavor)).toEqual({ argv: argvOf("mixed", null, sglangFlavor).argv, kvHandoff: undefined });
    expect(argvOf("prefill", "--kv-transfer-config {served}.json").argv.slice(-2)).toEqual(["--kv-transfer-config", "llama-70b.json"]);
  });

  it("gives each vLLM handoff replica its own block of NIXL side-channel ports, by its slot", async () => {
    const log = fakeEngineLog();
    logs.push(log);
    const files = new EngineFiles(join(log.dir, "engines"));
    const start = async (role: EngineLaunch["role"], slot: number) => {
      const engine = new ProcessEngine({ ...launch, role }, { flavor: vllmFlavor, command: FAKE_VLLM_COMMAND, kvHandoffArgs: vllmFlavor.kvHandoffArgs, host: "127.0.0.1", port: await freePort("127.0.0.1"), env: log.env(), files, startTimeoutMs: 10_000, stopGraceMs: 2_000, pollMs: 50, onExit: () => undefined, kvSideChannel: { slot, base: 5600 } });
      started.push(engine);
      await engine.start();
    };
    await start("decode", 3);
    await start("prefill", 0);
    await start("mixed", 1);
    expect(log.events().filter((e) => e.event === "start").map((e) => e.nixlPort)).toEqual(["5648", "5600", null]);
  });
});

describe("ProcessEngine against the fake engine", () => {
  it("starts the command template with the model's weights and served name, TP and port, and CUDA_VISIBLE_DEVICES from its GPUs", async () => {
    const { log, make } = driverWith();
    const engine = make();
    await engine.start();
    expect(engine.state).toBe("ready");
    expect(engine.accepting).toBe(true);
    const port = new URL(engine.url!).port;
    const [start] = log.events().filter((e) => e.event === "start");
    expect(start!.argv).toEqual(["serve", "meta-llama/Llama-2-70b-hf", "--served-model-name", "llama-70b", "--tensor-parallel-size", "2", "--host", "127.0.0.1", "--port", port]);
    expect(start!.cuda).toBe("2,3");
    const answer = await fetch(`${engine.url}/v1/chat/completions`, { method: "POST", body: "{}" });
    expect(answer.status).toBe(200);
  });

  it("reads vLLM and SGLang queue and KV metrics", async () => {
    const vllm = driverWith({ FAKE_ENGINE_WAITING: "3" }).make();
    const sglang = driverWith({ FAKE_ENGINE_WAITING: "5", FAKE_ENGINE_DELAY_MS: "500" }, sglangFlavor).make();
    await Promise.all([vllm.start(), sglang.start()]);
    expect(await vllm.load()).toEqual({ running: 0, waiting: 3, kvUse: 0 });
    const inFlight = fetch(`${sglang.url}/v1/chat/completions`, { method: "POST", body: "{}" });
    await expect.poll(() => sglang.load(), { timeout: 1000, interval: 20 }).toEqual({ running: 1, waiting: 5, kvUse: 0.1 });
    await inFlight;
  });

  it("answers a failed metrics read with the last good reading, not an empty queue, for up to its hold; then says it cannot read them", async () => {
    const engine = driverWith({ FAKE_ENGINE_WAITING: "3", FAKE_ENGINE_METRICS_OK: "1" }, vllmFlavor, { loadHoldMs: 300 }).make();
    await engine.start();
    expect(await engine.load()).toEqual({ running: 0, waiting: 3, kvUse: 0 });
    expect(await engine.load()).toEqual({ running: 0, waiting: 3, kvUse: 0, heldMs: expect.any(Number) });
    await new Promise((resolve) => setTimeout(resolve, 400));
    await expect(engine.load()).rejects.toThrow(/^vllm llama-tp2#0: cannot read metrics: HTTP 500; its last good reading is \d+ ms old$/);
  });

  it("drain stops admitting, waits for running to reach 0, then stop sends SIGTERM", async () => {
    const { log, make } = driverWith({ FAKE_ENGINE_DELAY_MS: "600" });
    const engine = make();
    await engine.start();
    const request = fetch(`${engine.url}/v1/chat/completions`, { method: "POST", body: "{}" });
    await expect.poll(() => log.events().some((e) => e.event === "request"), { timeout: 2000, interval: 20 }).toBe(true);
    const t0 = Date.now();
    const drained = await engine.drain(5_000);
    expect(drained).toEqual({ drained: true, running: 0 });
    expect(engine.accepting).toBe(false);
    expect(Date.now() - t0).toBeGreaterThan(300);
    expect((await request).status).toBe(200);
    await engine.stop();
    expect(engine.state).toBe("stopped");
    expect(log.events().filter((e) => e.event === "signal")).toEqual([expect.objectContaining({ signal: "SIGTERM", running: 0 })]);
  });

  it("drain gives up after its timeout while requests still run", async () => {
    const engine = driverWith({ FAKE_ENGINE_DELAY_MS: "3000" }).make();
    await engine.start();
    const request = fetch(`${engine.url}/v1/chat/completions`, { method: "POST", body: "{}" }).catch(() => undefined);
    await expect.poll(() => engine.load().then((l) => l.running), { timeout: 2000, interval: 20 }).toBe(1);
    expect(await engine.drain(200)).toEqual({ drained: false, running: 1 });
    await engine.stop();
    await request;
  });

  it("kills an engine that ignores SIGTERM after the grace period", async () => {
    const { log, make } = driverWith({ FAKE_ENGINE_IGNORE_SIGTERM: "1" }, vllmFlavor, { stopGraceMs: 300 });
    const engine = make();
    await engine.start();
    const t0 = Date.now();
    await engine.stop();
    expect(Date.now() - t0).toBeGreaterThanOrEqual(250);
    expect(engine.state).toBe("stopped");
    expect(log.events().some((e) => e.event === "signal")).toBe(true);
    await expect(fetch(`${engine.url}/health`)).rejects.toThrow();
  });

  it("fails to start with the reason when the command cannot run or never becomes healthy", async () => {
    const log = fakeEngineLog();
    logs.push(log);
    const files = new EngineFiles(join(log.dir, "engines"));
    const missing = new ProcessEngineDriver({ flavor: vllmFlavor, command: "/nonexistent/vllm serve {model}", host: "127.0.0.1", portBase: 0, env: log.env(), files, startTimeoutMs: 2000, stopGraceMs: 500 }).create(launch, () => undefined);
    await expect(missing.start()).rejects.toThrow(/could not start '\/nonexistent\/vllm'/);
    expect(files.readPids().records).toEqual([]);
    const slow = driverWith({ FAKE_ENGINE_BOOT_MS: "60000" }, vllmFlavor, { startTimeoutMs: 400 }).make();
    await expect(slow.start()).rejects.toThrow(/did not become healthy within 400 ms/);
    expect(slow.state).toBe("stopped");
    const crashing = new ProcessEngineDriver({ flavor: vllmFlavor, command: `${process.execPath} -e "console.error('CUDA out of memory'); process.exit(3)" {model}`, host: "127.0.0.1", portBase: 0, env: log.env(), files, startTimeoutMs: 10_000, stopGraceMs: 500 }).create(launch, () => undefined);
    await expect(crashing.start()).rejects.toThrow(/exited with status 3 before becoming healthy; last output:\nCUDA out of memory$/);
  });

  it("spawns nothing when stopped before its process starts, direct or pooled, and the start says why", async () => {
    const { log, make, files } = driverWith();
    const direct = new ProcessEngine(launch, { flavor: vllmFlavor, command: FAKE_VLLM_COMMAND, host: "127.0.0.1", port: await freePort("127.0.0.1"), env: log.env(), files, startTimeoutMs: 10_000, stopGraceMs: 2_000, pollMs: 50, onExit: () => undefined });
    started.push(direct);
    for (const engine of [direct, make()]) {
      // The start is past its first await (the port check, the pool) when stop comes.
      const starting = engine.start();
      await engine.stop();
      await expect(starting).rejects.toThrow("vllm llama-tp2#0 was stopped while starting; no engine was started");
      expect(engine.state).toBe("stopped");
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(log.events()).toEqual([]);
    expect(files.readPids().records).toEqual([]);
  });

  it("names its process in a pid file while it runs, and writes its output to a log beside it", async () => {
    const { make, files } = driverWith();
    const engine = make();
    await engine.start();
    const port = Number(new URL(engine.url!).port);
    const pid = logs.at(-1)!.events()[0]!.pid;
    expect(files.readPids().records).toEqual([
      {
        pid,
        processStartTime: readProcStat(pid)!.startTime,
        startedAtMs: expect.any(Number),
        kind: "vllm",
        launch: { ...launch, gpus: [2, 3] },
        host: "127.0.0.1",
        port,
        argv: [process.execPath, FAKE_ENGINE, "serve", launch.weights, "--served-model-name", launch.servedName, "--tensor-parallel-size", "2", "--host", "127.0.0.1", "--port", String(port)],
      },
    ]);
    expect(readProcStat(pid)!.pgrp).toBe(pid);
    await expect.poll(() => readFileSync(files.logPath(port), "utf8"), { timeout: 2000, interval: 20 }).toBe(`fake vllm engine: starting on 127.0.0.1:${port}\n`);
    await engine.stop();
    expect(files.readPids().records).toEqual([]);
  });

  it("reports an engine that dies on its own", async () => {
    const { make, exits } = driverWith();
    const engine = make();
    await engine.start();
    const pid = logs.at(-1)!.events()[0]!.pid;
    process.kill(pid, "SIGKILL");
    await expect.poll(() => exits.length, { timeout: 2000, interval: 20 }).toBe(1);
    expect(engine.state).toBe("failed");
    expect(exits[0]).toMatch(/killed by SIGKILL/);
  });
});

describe("ProcessEngine on a port another process holds", () => {
  const strangers: Server[] = [];
  afterEach(async () => {
    await Promise.all(strangers.splice(0).map((s) => closeServer(s)));
  });
  /** Another process's HTTP server on a free port, answering 200 to everything (health checks included). */
  const stranger = async () => {
    const server = createServer((_req, res) => res.end("x"));
    strangers.push(server);
    return Number(new URL(await listen(server, "127.0.0.1", await freePort())).port);
  };

  it("is not started there: the pool hands out the next port, and a start on that port fails without running the engine", async () => {
    const port = await stranger();
    const log = fakeEngineLog();
    logs.push(log);
    const files = new EngineFiles(join(log.dir, "engines"));
    const options = { flavor: vllmFlavor, command: FAKE_VLLM_COMMAND, host: "127.0.0.1", env: log.env(), files, startTimeoutMs: 10_000, stopGraceMs: 2_000, pollMs: 50 };
    const direct = new ProcessEngine(launch, { ...options, port, onExit: () => undefined });
    started.push(direct);
    await expect(direct.start()).rejects.toThrow(`vllm llama-tp2#0: port ${port} on 127.0.0.1 is in use by another process`);
    expect(log.events()).toEqual([]);

    const pooled = new ProcessEngineDriver({ ...options, portBase: port }).create(launch, () => undefined);
    started.push(pooled);
    await pooled.start();
    const pooledPort = new URL(pooled.url!).port;
    expect(Number(pooledPort)).toBeGreaterThan(port);
    expect(log.events().filter((e) => e.event === "start").map((e) => e.argv!.at(-1))).toEqual([pooledPort]);
  });

  it("fails a start whose own process ended, with the engine's reason, though another process answered its health check", async () => {
    const log = fakeEngineLog();
    logs.push(log);
    const exits: string[] = [];
    const engine = new ProcessEngineDriver({ flavor: vllmFlavor, command: `${process.execPath} ${LOST_PORT_ENGINE} --host {host} --port {port}`, host: "127.0.0.1", portBase: 0, env: log.env(), files: new EngineFiles(join(log.dir, "engines")), startTimeoutMs: 10_000, stopGraceMs: 500, pollMs: 50 }).create(launch, (_e, why) => exits.push(why));
    started.push(engine);
    await expect(engine.start()).rejects.toThrow(/vllm llama-tp2#0 exited with status 1 before becoming healthy; last output:\nERROR: .*address already in use$/);
    expect(engine.state).not.toBe("ready");
    expect(exits).toEqual([]);
  });
});

describe("ProcessEngine that hangs (alive, not answering)", () => {
  const liveness = { periodMs: 50, timeoutMs: 150, failures: 3, restartAfterMs: 0 };
  /** Stops (SIGSTOP) the engine's process; the returned function lets it go on (SIGCONT). */
  const hang = (pid: number) => {
    process.kill(pid, "SIGSTOP");
    return () => process.kill(pid, "SIGCONT");
  };

  it("takes no new requests while it does not answer its health checks, and says so once when it stops answering and once when it answers again", async () => {
    const messages: string[] = [];
    const { make, log } = driverWith({}, vllmFlavor, { liveness, log: (m) => messages.push(m) });
    const engine = make();
    await engine.start();
    const inFlight = engine.stoppedAnswering!;
    expect(inFlight.aborted).toBe(false);
    const resume = hang(log.events()[0]!.pid);
    try {
      await expect.poll(() => engine.unresponsive, { timeout: 5000, interval: 20 }).toEqual({ sinceMs: expect.any(Number), reason: "3 checks in a row failed, the last: no answer within 150 ms" });
      expect(engine.accepting).toBe(false);
      expect(engine.state).toBe("ready");
      // What the gateway ends the requests in flight there by.
      expect(inFlight.aborted).toBe(true);
      expect((inFlight.reason as Error).message).toBe("it stopped answering its health checks (3 checks in a row failed, the last: no answer within 150 ms)");
    } finally {
      resume();
    }
    await expect.poll(() => engine.accepting, { timeout: 5000, interval: 20 }).toBe(true);
    expect(engine.unresponsive).toBeUndefined();
    expect(engine.stoppedAnswering!.aborted).toBe(false);
    expect(messages).toEqual([
      "engine vllm llama-tp2#0 stopped answering its health checks (3 checks in a row failed, the last: no answer within 150 ms); it gets no new requests and is reported failed until it answers",
      expect.stringMatching(/^engine vllm llama-tp2#0 answers its health checks again, after \d+ s without$/),
    ]);
  });

  it("is killed once it has not answered for restartAfterMs, and reported ended, so the applier starts it again", async () => {
    const messages: string[] = [];
    const { make, log, exits } = driverWith({}, vllmFlavor, { liveness: { ...liveness, restartAfterMs: 300 }, log: (m) => messages.push(m) });
    const engine = make();
    await engine.start();
    const pid = log.events()[0]!.pid;
    hang(pid);
    await expect.poll(() => exits, { timeout: 10_000, interval: 20 }).toEqual([expect.stringMatching(/^vllm llama-tp2#0 did not answer its health checks for 300 ms and was killed to be started again/)]);
    expect(engine.state).toBe("failed");
    expect(readProcStat(pid)).toBeNull();
    expect(messages.at(-1)).toBe("engine vllm llama-tp2#0 did not answer its health checks for 300 ms and was killed to be started again");
  });
});
