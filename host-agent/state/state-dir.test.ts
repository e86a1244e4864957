import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { readProcStat } from "../util/proc-stat.ts";
import { openStateDir, StateDirError } from "./state-dir.ts";

const AGENT_BIN = fileURLToPath(new URL("../../cli/bin.js", import.meta.url));
const root = mkdtempSync(join(tmpdir(), "state-dir-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("openStateDir", () => {
  it("takes the dir's lock, refuses a second agent while the first runs, and lets go at release", () => {
    const dir = join(root, "a");
    const first = openStateDir({ configured: dir, temporary: false, site: "wind-a" });
    expect(JSON.parse(readFileSync(join(dir, "agent.lock"), "utf8"))).toEqual({ pid: process.pid, startTime: readProcStat(process.pid)!.startTime, site: "wind-a" });
    expect(() => openStateDir({ configured: dir, temporary: false, site: "wind-a" })).toThrow(new StateDirError(`another agent (pid ${process.pid}, site wind-a) is running with the state dir ${dir}; stop it, or give this one its own --state-dir`));
    first.release();
    expect(existsSync(join(dir, "agent.lock"))).toBe(false);
    openStateDir({ configured: dir, temporary: false, site: "wind-a" }).release();
  });

  it("takes over the lock of an agent that has died", async () => {
    const dir = join(root, "b");
    const dead = spawn(process.execPath, ["-e", ""]);
    const stat = readProcStat(dead.pid!)!;
    await new Promise((resolve) => dead.once("exit", resolve));
    openStateDir({ configured: dir, temporary: false, site: "wind-a" }).release();
    writeFileSync(join(dir, "agent.lock"), JSON.stringify({ pid: dead.pid, startTime: stat.startTime, site: "wind-a" }));
    const state = openStateDir({ configured: dir, temporary: false, site: "wind-a" });
    expect(JSON.parse(readFileSync(join(dir, "agent.lock"), "utf8")).pid).toBe(process.pid);
    state.release();
  });

  it("makes a fresh temp dir for a simulated site and removes it at release; a configured dir wins", () => {
    const state = openStateDir({ configured: undefined, temporary: true, site: "sim-1" });
    expect(state.dir).toMatch(/greenference-agent-sim-1-/);
    expect(state.temporary).toBe(true);
    state.release();
    expect(existsSync(state.dir)).toBe(false);
    const configured = openStateDir({ configured: join(root, "c"), temporary: true, site: "sim-1" });
    expect([configured.dir, configured.temporary]).toEqual([join(root, "c"), false]);
    configured.release();
  });

  it("removes the temp dirs its site's killed simulated agents left, not those of agents that run", async () => {
    const dead = spawn(process.execPath, ["-e", ""]);
    const stat = readProcStat(dead.pid!)!;
    await new Promise((resolve) => dead.once("exit", resolve));
    const killed = mkdtempSync(join(tmpdir(), "greenference-agent-sim-9-"));
    writeFileSync(join(killed, "agent.lock"), JSON.stringify({ pid: dead.pid, startTime: stat.startTime, site: "sim-9" }));
    const running = openStateDir({ configured: undefined, temporary: true, site: "sim-9" });
    const otherSite = mkdtempSync(join(tmpdir(), "greenference-agent-sim-9-x-"));
    writeFileSync(join(otherSite, "agent.lock"), JSON.stringify({ pid: dead.pid, startTime: stat.startTime, site: "sim-9-x" }));
    const next = openStateDir({ configured: undefined, temporary: true, site: "sim-9" });
    expect([existsSync(killed), existsSync(running.dir), existsSync(otherSite)]).toEqual([false, true, true]);
    for (const s of [running, next]) s.release();
    rmSync(otherSite, { recursive: true, force: true });
  });

  it("says which dir it cannot create", () => {
    writeFileSync(join(root, "file"), "");
    expect(() => openStateDir({ configured: join(root, "file", "state"), temporary: false, site: "wind-a" })).toThrow(/^cannot create the agent's state dir .*file\/state \(stateDir, --state-dir\): cannot create .*file\/state: .*file is not a directory$/);
  });

  it("refuses a state dir under /proc at once, in one line, from the agent's command line", () => {
    // In a child process: the hang this guards against (recursive mkdir under /proc) would block this worker.
    const t0 = Date.now();
    const r = spawnSync(process.execPath, [AGENT_BIN, "agent", "--site", "s1", "--edge", "http://127.0.0.1:9", "--gpu", "sim", "--engine", "sim", "--state-dir", "/proc/x/state"], { encoding: "utf8", timeout: 20_000, env: { ...process.env, GREENFERENCE_TOKEN: "t" } });
    expect(r.signal).toBeNull();
    expect(r.status).toBe(1);
    expect(r.stderr).toBe("greenference agent: cannot create the agent's state dir /proc/x/state (stateDir, --state-dir): cannot create /proc/x/state: /proc takes no new directories\n");
    expect(Date.now() - t0).toBeLessThan(10_000);
  });
});
