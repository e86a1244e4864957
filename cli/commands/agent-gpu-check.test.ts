import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { installFakeNvidiaSmi, type FakeNvidiaSmi } from "../../host-agent/gpu/fake-nvidia-smi.test-helper.ts";
import { runCli } from "../run-command.test-helper.ts";

let fake: FakeNvidiaSmi;
beforeAll(() => {
  fake = installFakeNvidiaSmi();
});
afterEach(() => {
  delete process.env.FAKE_SMI_NA;
  delete process.env.FAKE_SMI_LOG;
  fake.reset();
});

describe("greenference agent gpu-check", () => {
  it("reads every GPU through nvidia-smi and changes nothing", async () => {
    process.env.FAKE_SMI_LOG = fake.env().FAKE_SMI_LOG;
    const r = await runCli(["agent", "gpu-check", "--gpu", "nvidia-smi", "--nvidia-smi", fake.path, "--energy-window-ms", "50", "--json"]);
    expect(r.code).toBe(0);
    const result = r.last();
    expect(result).toMatchObject({ ok: true, backend: "nvidia-smi", devices: 2, problems: [] });
    const mig = result.reads[1].reads.find((x: { op: string }) => x.op === "migMode");
    expect(mig).toMatchObject({ ok: true, value: { current: false, pending: false } });
    // Only reads: no clock lock or reset, no power limit, no MIG change.
    expect(fake.calls()).toContain("--query-gpu=mig.mode.current,mig.mode.pending --format=csv,noheader,nounits -i 1");
    expect(fake.calls().filter((c) => /-lgc|-rgc|-pl|-mig|mig -/.test(c))).toEqual([]);
  });

  it("exits 1 naming each read the agent needs that fails", async () => {
    process.env.FAKE_SMI_NA = "power.draw";
    const r = await runCli(["agent", "gpu-check", "--gpu", "nvidia-smi", "--nvidia-smi", fake.path, "--energy-window-ms", "10", "--json"]);
    expect(r.code).toBe(1);
    expect(r.last().problems).toEqual(expect.arrayContaining([expect.stringMatching(/^gpu 0 powerUsageW: .*power\.draw as \[N\/A\]/), expect.stringMatching(/^gpu 1 totalEnergyJ: /)]));
  });

  it("with --json says in its JSON line that the GPUs could not be opened (no NVML, no nvidia-smi)", async () => {
    const r = await runCli(["agent", "gpu-check", "--gpu", "nvidia-smi", "--nvidia-smi", "/nonexistent/nvidia-smi", "--json"]);
    expect(r.code).toBe(1);
    expect(r.last()).toMatchObject({ ok: false, devices: 0, problems: [expect.stringMatching(/^cannot open the GPUs: /)] });
    const human = await runCli(["agent", "gpu-check", "--gpu", "nvidia-smi", "--nvidia-smi", "/nonexistent/nvidia-smi"]);
    expect(human.code).toBe(1);
    expect(human.out).toEqual([]);
    expect(human.err.join("\n")).toMatch(/cannot open the GPUs: /);
  });

  it("checks simulated GPUs, and refuses an unknown backend", async () => {
    const r = await runCli(["agent", "gpu-check", "--gpu", "sim", "--sim-gpus", "1", "--energy-window-ms", "10"]);
    expect(r.code).toBe(0);
    expect(r.out.join("\n")).toContain("the agent has what it needs from these GPUs");
    const bad = await runCli(["agent", "gpu-check", "--gpu", "cuda"]);
    expect(bad.code).not.toBe(0);
    expect(bad.err.join("\n")).toMatch(/--gpu must be nvml, nvidia-smi or sim, got 'cuda'/);
  });
});
