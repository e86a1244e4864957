import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { GpuError } from "../gpu-error.ts";
import { migModeCell, numberCell, parseCsvRows, parseMigDevices, parseSupportedGraphicsClocks } from "./nvidia-smi-output.ts";
import { PowerIntegrator } from "./power-integrator.ts";

const site = { backend: "nvidia-smi", op: "powerUsageW", device: 0 };

function thrown(run: () => unknown): GpuError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(GpuError);
    return error as GpuError;
  }
  throw new Error("expected a GpuError");
}

/** What nvidia-smi printed on a real H100 (see test-fixtures/nvidia-smi-h100/README.md). */
const h100 = (file: string) => readFileSync(new URL(`../../test-fixtures/nvidia-smi-h100/${file}`, import.meta.url), "utf8");

describe("nvidia-smi output", () => {
  it("parses what nvidia-smi printed on a real H100: its query row (MIG mode included), its GPU list and its clocks", () => {
    const [row] = parseCsvRows(h100("query-gpu.txt"), 11, site);
    const [index, name, uuid, drawW, limitW, defaultW, gr, sm, mem, current, pending] = row!;
    expect([index, name, uuid]).toEqual(["0", "NVIDIA H100 80GB HBM3", "GPU-47da432f-09cb-3beb-82cb-731c14695450"]);
    expect([drawW, limitW, defaultW, gr, sm, mem].map((cell) => numberCell(cell!, "field", site))).toEqual([75.12, 700, 700, 345, 345, 2619]);
    expect([migModeCell(current!, "mig.mode.current", site), migModeCell(pending!, "mig.mode.pending", site)]).toEqual([false, false]);
    expect(parseMigDevices(h100("list.txt"), 0, site)).toEqual([]);
    const clocks = parseSupportedGraphicsClocks(h100("supported-clocks.txt"), site);
    expect([clocks.length, clocks[0], clocks.at(-1)]).toEqual([110, 1980, 345]);
  });

  it("reads MIG mode cells as nvidia-smi prints them, [N/A] as NOT_SUPPORTED", () => {
    expect(migModeCell("Enabled", "mig.mode.current", site)).toBe(true);
    expect(thrown(() => migModeCell("[N/A]", "mig.mode.current", site)).code).toBe("NOT_SUPPORTED");
    expect(thrown(() => migModeCell("Pending", "mig.mode.current", site)).code).toBe("BAD_OUTPUT");
  });

  it("reads the MIG devices listed under one GPU by nvidia-smi -L, and nothing of another GPU's", () => {
    const listing = [
      "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-5b8c0000-0000-0000-0000-000000000000)",
      "  MIG 3g.40gb     Device  0: (UUID: MIG-0d6c0000-0000-5000-8000-000000000000)",
      "  MIG 1g.10gb     Device  1: (UUID: MIG-0d6c0000-0000-5000-8000-000000000001)",
      "GPU 1: NVIDIA A100-SXM4-80GB (UUID: GPU-5b8c0000-0000-0000-0000-000000000001)",
    ].join("\n");
    expect(parseMigDevices(listing, 0, site)).toEqual([
      { profile: "3g.40gb", uuid: "MIG-0d6c0000-0000-5000-8000-000000000000" },
      { profile: "1g.10gb", uuid: "MIG-0d6c0000-0000-5000-8000-000000000001" },
    ]);
    expect(parseMigDevices(listing, 1, site)).toEqual([]);
    expect(thrown(() => parseMigDevices(listing, 2, site)).code).toBe("NOT_FOUND");
    expect(thrown(() => parseMigDevices(`${listing.split("\n")[0]}\n  MIG garbled`, 0, site)).code).toBe("BAD_OUTPUT");
  });

  it("splits CSV rows and trims cells", () => {
    expect(parseCsvRows("0, NVIDIA A100-SXM4-80GB, 71.20\n\n1, NVIDIA H100 80GB HBM3, 80.00\n", 3, site)).toEqual([
      ["0", "NVIDIA A100-SXM4-80GB", "71.20"],
      ["1", "NVIDIA H100 80GB HBM3", "80.00"],
    ]);
  });

  it("calls output with the wrong shape BAD_OUTPUT and quotes it", () => {
    const error = thrown(() => parseCsvRows("Failed to initialize NVML: Driver/library version mismatch\n", 2, site));
    expect(error.code).toBe("BAD_OUTPUT");
    expect(error.message).toContain('"Failed to initialize NVML: Driver/library version mismatch\\n"');
  });

  it("reads numbers, and [N/A] / [Not Supported] as NOT_SUPPORTED", () => {
    expect(numberCell("301.52", "power.draw", site)).toBe(301.52);
    expect(thrown(() => numberCell("[Not Supported]", "power.draw", site)).code).toBe("NOT_SUPPORTED");
    expect(thrown(() => numberCell("lots", "power.draw", site)).code).toBe("BAD_OUTPUT");
  });

  it("keeps the graphics clocks of the top memory clock", () => {
    expect(parseSupportedGraphicsClocks("405, 405\n1593, 1395\n1593, 1410\n405, 390\n", site)).toEqual([1410, 1395]);
  });
});

describe("PowerIntegrator", () => {
  it("integrates by the trapezoid rule per device, starting at zero", () => {
    const energy = new PowerIntegrator();
    expect(energy.sample(0, 100, 1_000)).toBe(0);
    expect(energy.sample(1, 50, 1_000)).toBe(0);
    expect(energy.sample(0, 300, 3_000)).toBe(400);
    expect(energy.sample(0, 300, 2_000)).toBe(400);
    expect(energy.sample(1, 50, 5_000)).toBe(200);
  });
});
