import { spawn } from "node:child_process";
import { once } from "node:events";
import { describe, expect, it } from "vitest";
import { promptsOf, runDecisionBench, seededRng, syntheticTokens } from "../../bench/edge/decision.ts";
import { benchFleet, benchPlan, siteIds } from "../../bench/edge/fleet-64.ts";
import { closedLoop } from "../../bench/edge/load.ts";
import { cpuMs, descendants } from "../../bench/edge/process-cpu.ts";
import { startUpstream } from "../../bench/edge/upstream.ts";
import { planAgainstFleet } from "../../src/core/routing/plan-against-fleet.ts";
import { Fleet } from "../../src/core/schemas/fleet.ts";
import { Plan } from "../../src/core/schemas/plan.ts";

describe("edge bench pieces", () => {
  it("builds a valid 64-site x 9-class fleet and a plan with 64 targets per class that fits it", () => {
    const fleet = Fleet.parse(benchFleet((s) => `http://127.0.0.1:1/${s}`));
    const plan = Plan.parse(benchPlan(1));
    expect(fleet.sites).toHaveLength(64);
    expect(fleet.classes).toHaveLength(9);
    expect(Object.values(plan.routing).map((t) => t.length)).toEqual(Array(9).fill(64));
    expect(planAgainstFleet(plan, fleet)).toEqual([]);
    expect(siteIds()[63]).toBe("s63");
  });

  it("times decisions and their parts", () => {
    const rng = seededRng(3);
    const out = runDecisionBench(promptsOf(syntheticTokens(64, rng), rng), "test", () => process.hrtime.bigint(), 2_000, 500);
    expect(out.decisions).toBe(2_000);
    expect(out.total.p50).toBeGreaterThan(0);
    expect(out.total.p99).toBeGreaterThanOrEqual(out.total.p50);
    expect(out.parts.select.p50).toBeGreaterThan(0);
  });

  it.runIf(process.platform === "linux")("reads a child process's CPU time from /proc", async () => {
    // The child spends 300 ms of its own CPU, says so, then idles until killed.
    const child = spawn(process.execPath, ["-e", "while (process.cpuUsage().user < 300e3); console.log('spent'); setTimeout(() => {}, 30e3);"], { stdio: ["ignore", "pipe", "inherit"] });
    try {
      await once(child.stdout!, "data");
      expect(descendants()).toContain(child.pid);
      expect(cpuMs([child.pid!])).toBeGreaterThanOrEqual(290);
      expect(cpuMs([])).toBeNull();
    } finally {
      child.kill();
    }
  });

  it("drives a bounded closed loop against the local upstream", async () => {
    const upstream = await startUpstream();
    try {
      const run = await closedLoop(`${upstream.url}/v1/chat/completions`, "{}", 50, 4, () => performance.now());
      expect(run).toMatchObject({ requests: 50, failures: 0 });
      expect(upstream.requests()).toBe(50);
    } finally {
      await upstream.close();
    }
  });
});
