import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sliceBody } from "../../host-agent/applier/plan-fixtures.test-helper.ts";
import { runCli } from "../../cli/run-command.test-helper.ts";
import { startFakeEdge } from "./fake-edge.test-helper.ts";

const BIN = fileURLToPath(new URL("../../cli/bin.js", import.meta.url));
const SITE = "wind-c";
const TOKEN = "gfs_wind-c_abc123";
let edge: Awaited<ReturnType<typeof startFakeEdge>>;

beforeAll(async () => {
  edge = await startFakeEdge(SITE, TOKEN);
});
afterAll(() => edge.close());

/** The agent as a process on a simulated site of 2 GPUs, polling the fake edge fast; its stdout so far, and its exit code. */
function spawnSimAgent() {
  const child = spawn(process.execPath, [BIN, "agent", "--site", SITE, "--edge", edge.url, "--token", TOKEN, "--gpu", "sim", "--engine", "sim", "--sim-gpus", "2", "--plan-poll-ms", "100", "--heartbeat-ms", "200"], { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout.on("data", (c: Buffer) => (out += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  return { child, stdout: () => out, exited };
}

describe("greenference agent", () => {
  it("prints the resolved configuration with flags over environment, secrets redacted", async () => {
    process.env.GREENFERENCE_SIM_GPUS = "2";
    process.env.GREENFERENCE_HEARTBEAT_MS = "1234";
    try {
      const r = await runCli(["agent", "--site", SITE, "--edge", edge.url, "--token", TOKEN, "--gpu", "sim", "--engine", "sim", "--sim-gpus", "3", "--print-config"]);
      expect(r.code).toBe(0);
      expect(r.last().config).toMatchObject({ site: SITE, simGpus: 3, heartbeatMs: 1234, token: "<redacted>" });
    } finally {
      delete process.env.GREENFERENCE_SIM_GPUS;
      delete process.env.GREENFERENCE_HEARTBEAT_MS;
    }
  });

  it("names a bad value's field and exits 1", async () => {
    const r = await runCli(["agent", "--site", SITE, "--edge", edge.url, "--token", TOKEN, "--sim-speed=-1"]);
    expect(r.code).toBe(1);
    expect(r.err.join("\n")).toMatch(/simSpeed \(--sim-speed\): Too small/);
  });

  it("keeps running when the pipe its log goes to closes, and still stops cleanly", async () => {
    edge.state.plan = sliceBody(11, SITE, [{ id: "m", gpus: [0] }]);
    const { child, stdout, exited } = spawnSimAgent();
    try {
      await expect.poll(() => stdout().includes('"running":true'), { timeout: 15_000, interval: 50 }).toBe(true);
      // The log's reader goes away (a `| tee` that ended, a supervisor's pipe); the agent logs on.
      child.stderr.destroy();
      edge.state.plan = sliceBody(12, SITE, [{ id: "n", gpus: [1] }]);
      await expect.poll(() => edge.state.applied.find((a) => a.planVersion === 12), { timeout: 10_000, interval: 50 }).toMatchObject({ ok: true });
      expect(child.exitCode).toBeNull();
      child.kill("SIGTERM");
      expect(await exited).toBe(0);
      expect(JSON.parse(stdout().trim().split("\n").at(-1)!)).toMatchObject({ stopped: true, signal: "SIGTERM", appliedPlanVersion: 12 });
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
    }
  });

  it("runs as a process on a simulated site until SIGTERM, then prints its last JSON line", async () => {
    edge.state.plan = sliceBody(7, SITE, [{ id: "m", gpus: [0] }]);
    const { child, stdout, exited } = spawnSimAgent();
    try {
      await expect.poll(() => stdout().includes('"running":true'), { timeout: 15_000, interval: 50 }).toBe(true);
      expect(JSON.parse(stdout().split("\n")[0]!)).toMatchObject({ running: true, site: SITE, gpuBackend: "sim", gpus: 2, engine: "sim", localApi: null });
      await expect.poll(() => edge.state.applied.find((a) => a.planVersion === 7), { timeout: 10_000, interval: 50 }).toMatchObject({ ok: true });
      await expect.poll(() => edge.state.heartbeats.length, { timeout: 5000, interval: 50 }).toBeGreaterThan(0);
      child.kill("SIGTERM");
      expect(await exited).toBe(0);
      const lines = stdout().trim().split("\n");
      expect(JSON.parse(lines.at(-1)!)).toEqual({ stopped: true, site: SITE, signal: "SIGTERM", appliedPlanVersion: 7 });
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
    }
  });
});
