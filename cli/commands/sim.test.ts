import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../run-command.test-helper.ts";

const data = resolve(process.cwd(), "data");

function scenario(overrides: Record<string, unknown> = {}) {
  const dir = mkdtempSync(join(tmpdir(), "gf-sim-"));
  const file = join(dir, "scenario.json");
  const body = {
    name: "test",
    seed: 3,
    durationS: 1800,
    model: "llama3.1-8b",
    sites: [
      { id: "wind", gpu: "a100", gpus: "from-power", power: { kind: "wind", file: join(data, "grid-2022/BPAT-2022H1.csv"), peakMW: 1, startHour: 100 }, carbon: { kind: "fixed", gPerKwh: 11 } },
      { id: "grid", gpu: "a100", gpus: 16, power: { kind: "fixed", watts: 20000 }, carbon: { kind: "grid", file: join(data, "grid-2022/CISO-2022H1.csv"), startHour: 100 } },
    ],
    workload: { kind: "trace", file: join(data, "azure-llm-2023/AzureLLMInferenceTrace_conv.csv"), multiplier: 0.3 },
    profile: { tps: [1], loadFractions: [0.1, 0.3], requestsPerPoint: 30 },
    policy: { kind: "capacity", cadenceS: 600, tp: 1 },
    ...overrides,
  };
  writeFileSync(file, JSON.stringify(body));
  return { dir, file };
}

describe("greenference sim", () => {
  it("runs a scenario, prints the figures as the last JSON line and writes plots; the same seed gives identical JSON", async () => {
    const { dir, file } = scenario();
    const out = join(dir, "out");
    const a = await runCli(["sim", "--scenario", file, "--out", out, "--json"]);
    expect(a.err).toEqual([]);
    expect(a.code).toBe(0);
    const j = a.last();
    for (const k of ["arrived", "served", "dropped", "goodput_rps", "drop_slots", "slo_attainment", "energy_kwh", "carbon_kg", "jain"]) expect(typeof j[k]).toBe("number");
    expect(j.served + j.dropped).toBeCloseTo(j.arrived, 3);
    expect(Object.keys(j.e2e_ms)).toEqual(["p50", "p90", "p99"]);
    expect(readdirSync(out).sort()).toEqual(["carbon.svg", "latency-cdf.svg", "load.svg", "power-grid.svg", "power-wind.svg", "result.json", "summary.md"]);
    expect(readFileSync(join(out, "load.svg"), "utf8")).toMatch(/^<svg/);
    const b = await runCli(["sim", "--scenario", file, "--json"]);
    expect(b.out.at(-1)).toBe(a.out.at(-1));
  });

  it("names the offending field of an invalid scenario", async () => {
    const { file } = scenario({ sites: [{ id: "x", gpu: "a100", gpus: 8, power: { kind: "wind", file: "w.csv", peakMW: -1 }, carbon: { kind: "fixed", gPerKwh: 1 } }] });
    const r = await runCli(["sim", "--scenario", file]);
    expect(r.code).toBe(1);
    expect(r.err.join("\n")).toContain("sites[0].power.peakMW");
  });

  it("refuses a data file that does not cover the simulated period", async () => {
    const { file } = scenario({ durationS: 7200 });
    const r = await runCli(["sim", "--scenario", file]);
    expect(r.code).toBe(1);
    expect(r.err.join("\n")).toMatch(/workload covers 3540 s, but durationS is 7200/);
  });

  const capacity = (o: Record<string, unknown>) => ({ policy: { kind: "capacity", cadenceS: 600, tp: 1, ...o } });
  it.each([
    { case: "a step longer than the run", o: { stepS: 100000 }, err: "stepS: a step of 100000 s is longer than the run (durationS 1800 s)" },
    { case: "a step that runs past the end", o: { stepS: 700 }, err: "stepS: 700 s does not divide durationS (1800 s): the last step would run past the end" },
    { case: "a TP the profile lacks", o: capacity({ tp: 2 }), err: "policy.tp: TP 2 is not in the profile (profile.tps: 1)" },
    { case: "planner TPs the profile lacks", o: { policy: { kind: "planner", planner: { kind: "dynamollm", tps: [1, 4] } } }, err: "policy.planner.tps: TP 4 is not in the profile (profile.tps: 1)" },
    { case: "a clock the profile lacks", o: capacity({ mhz: 1500 }), err: 'policy.mhz: 1500 MHz is not a profiled clock of A100-80GB (810, 900, 1005, 1110, 1200, 1305, 1410, or "max")' },
    { case: "a TP no site has the GPUs for", o: { ...capacity({ tp: 4 }), profile: { tps: [4], loadFractions: [0.3], requestsPerPoint: 10 } }, err: "policy.tp: TP 4 needs 4 GPUs, but no site has that many (most: 2)", sites: 2 },
    { case: "no class edges", o: { classPercentiles: [] }, err: "classPercentiles: Too small" },
    { case: "class edges out of order", o: { classPercentiles: [66, 33] }, err: "classPercentiles: must increase, each value once" },
    { case: "load fractions out of order", o: { profile: { tps: [1], loadFractions: [0.3, 0.1] } }, err: "profile.loadFractions: must increase, each value once" },
    { case: "no TP to profile", o: { profile: { tps: [] } }, err: "profile.tps: Too small" },
    { case: "an SLO no request can meet", o: { sloMultiple: 0.5 }, err: "sloMultiple: must be at least 1: below, no request can meet its SLO" },
  ])("refuses a scenario that could serve nothing, in one line naming the field: $case", async ({ o, err, sites }) => {
    const { file } = scenario(sites ? { ...o, sites: [{ id: "small", gpu: "a100", gpus: sites, power: { kind: "fixed", watts: 20000 }, carbon: { kind: "fixed", gPerKwh: 1 } }] } : o);
    const r = await runCli(["sim", "--scenario", file]);
    expect(r.code).toBe(1);
    expect(r.err).toEqual([expect.stringContaining(`greenference sim: ${file}: ${err}`)]);
    expect(r.err[0]).not.toContain("\n");
  });

  it("warns on stderr, exit 0, when requests arrived and none was served", async () => {
    const { file } = scenario({ sites: [{ id: "dark", gpu: "a100", gpus: 16, power: { kind: "fixed", watts: 100 }, carbon: { kind: "fixed", gPerKwh: 1 } }] });
    const r = await runCli(["sim", "--scenario", file, "--json"]);
    expect(r.code).toBe(0);
    expect(r.last()).toMatchObject({ served: 0 });
    expect(r.err).toEqual([expect.stringMatching(/^greenference sim: warning: none of the \d+ requests that arrived was served \(\d+ dropped\): no instance could take them/)]);
  });

  it("refuses an --out it cannot create at once, before running, in one line", async () => {
    const { file } = scenario();
    const t0 = Date.now();
    const r = await runCli(["sim", "--scenario", file, "--out", "/proc/x/out"]);
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(r.code).toBe(1);
    expect(r.err).toEqual(["greenference sim: cannot create /proc/x/out: /proc takes no new directories"]);
  });
});
