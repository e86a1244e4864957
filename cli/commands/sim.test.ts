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
});
