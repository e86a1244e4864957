import { checkClockRange, checkIndex, checkMigProfiles, checkPowerW } from "../arguments.ts";
import type { GpuBackend, GpuClocks, GpuDevice, GpuOp, MigDevice, MigMode, MigProfile } from "../gpu-backend.ts";
import { GpuError, type GpuErrorSite } from "../gpu-error.ts";
import { gpuErrorCodeOf, NvmlReturn } from "../nvml/nvml-return.ts";
import { migModeCell, numberCell, optionalTextCell, parseCsvRows, parseMigDevices, parseSupportedGraphicsClocks } from "./nvidia-smi-output.ts";
import { PowerIntegrator } from "./power-integrator.ts";
import { runCommand } from "./run-command.ts";

export interface NvidiaSmiOptions {
  /** The nvidia-smi executable. Default `nvidia-smi` (looked up on PATH). */
  path?: string;
  /** Per-command limit. Default 30 s: MIG changes can take several seconds. */
  timeoutMs?: number;
  /** Environment for the child; default the agent's own. */
  env?: NodeJS.ProcessEnv;
  /** Wall clock in ms for the energy integral. Default `Date.now`. */
  now?: () => number;
}

const CSV = "--format=csv,noheader,nounits";

/**
 * GPU control by running `nvidia-smi`: the fallback where NVML cannot be loaded or refuses a call,
 * and the backend for MIG. Each call spawns a process (tens of ms), so it is no place for a
 * per-iteration loop. A non-zero exit becomes a GpuError carrying nvidia-smi's message; its exit
 * status uses NVML's return codes, so NO_PERMISSION and NOT_SUPPORTED come through as such.
 *
 * Energy: nvidia-smi has no energy counter to query, so `totalEnergyJ` integrates `power.draw`
 * over time (trapezoid rule) between the samples taken by `powerUsageW` and `totalEnergyJ`
 * themselves; it starts at 0 on the first sample and is only as fine as the sampling.
 *
 * @example
 * const gpu = new NvidiaSmiBackend({ path: "/usr/bin/nvidia-smi" });
 * await gpu.init();
 * await gpu.lockGraphicsClocks(0, 1005, 1005); // nvidia-smi -i 0 -lgc 1005,1005
 */
export class NvidiaSmiBackend implements GpuBackend {
  readonly name = "nvidia-smi";
  private count: number | undefined;
  private readonly energy = new PowerIntegrator();

  constructor(private readonly options: NvidiaSmiOptions = {}) {}

  async init(): Promise<void> {
    const site = { backend: this.name, op: "init" };
    this.count = parseCsvRows(await this.run(site, ["--query-gpu=index", CSV]), 1, site).length;
  }

  async shutdown(): Promise<void> {
    this.count = undefined;
  }

  async deviceCount(): Promise<number> {
    return this.initialised("deviceCount");
  }

  async devices(): Promise<GpuDevice[]> {
    this.initialised("devices");
    const site = { backend: this.name, op: "devices" };
    const rows = parseCsvRows(await this.run(site, ["--query-gpu=index,name,uuid", CSV]), 3, site);
    return rows.map(([index = "", name = "", uuid = ""]) => {
      const uuidOrNone = optionalTextCell(uuid);
      const device = { index: numberCell(index, "index", site), name };
      return uuidOrNone === undefined ? device : { ...device, uuid: uuidOrNone };
    });
  }

  async supportedGraphicsClocks(index: number): Promise<number[]> {
    const site = this.site("supportedGraphicsClocks", index);
    return parseSupportedGraphicsClocks(await this.run(site, ["--query-supported-clocks=mem,gr", CSV, "-i", String(index)]), site);
  }

  async lockGraphicsClocks(index: number, minMhz: number, maxMhz: number): Promise<void> {
    const site = this.site("lockGraphicsClocks", index);
    checkClockRange(site, minMhz, maxMhz);
    await this.run(site, ["-i", String(index), "-lgc", `${minMhz},${maxMhz}`]);
  }

  async resetGraphicsClocks(index: number): Promise<void> {
    await this.run(this.site("resetGraphicsClocks", index), ["-i", String(index), "-rgc"]);
  }

  async powerUsageW(index: number): Promise<number> {
    const [watts] = await this.queryNumbers(this.site("powerUsageW", index), ["power.draw"]);
    this.energy.sample(index, watts, this.now());
    return watts;
  }

  async totalEnergyJ(index: number): Promise<number> {
    const [watts] = await this.queryNumbers(this.site("totalEnergyJ", index), ["power.draw"]);
    return this.energy.sample(index, watts, this.now());
  }

  async powerLimitW(index: number): Promise<number> {
    const [watts] = await this.queryNumbers(this.site("powerLimitW", index), ["power.limit"]);
    return watts;
  }

  async setPowerLimitW(index: number, watts: number): Promise<void> {
    const site = this.site("setPowerLimitW", index);
    checkPowerW(site, watts);
    await this.run(site, ["-i", String(index), "-pl", String(watts)]);
  }

  async defaultPowerLimitW(index: number): Promise<number> {
    const [watts] = await this.queryNumbers(this.site("defaultPowerLimitW", index), ["power.default_limit"]);
    return watts;
  }

  async currentClocksMhz(index: number): Promise<GpuClocks> {
    const [graphicsMhz, smMhz, memoryMhz] = await this.queryNumbers(this.site("currentClocksMhz", index), ["clocks.gr", "clocks.sm", "clocks.mem"]);
    return { graphicsMhz, smMhz, memoryMhz };
  }

  async createMigInstances(index: number, profiles: readonly MigProfile[]): Promise<void> {
    const site = this.site("createMigInstances", index);
    checkMigProfiles(site, profiles);
    await this.run(site, ["-i", String(index), "-mig", "1"]);
    await this.run(site, ["mig", "-i", String(index), "-cgi", profiles.join(","), "-C"]);
  }

  /** Idempotent: "nothing to destroy" (exit status NOT_FOUND) counts as done. */
  async destroyMigInstances(index: number): Promise<void> {
    const site = this.site("destroyMigInstances", index);
    await this.run(site, ["mig", "-i", String(index), "-dci"], { allowNotFound: true });
    await this.run(site, ["mig", "-i", String(index), "-dgi"], { allowNotFound: true });
  }

  /** `nvidia-smi -L`, the MIG lines under the GPU. */
  async migDevices(index: number): Promise<MigDevice[]> {
    const site = this.site("migDevices", index);
    return parseMigDevices(await this.run(site, ["-L"]), index, site);
  }

  /** `--query-gpu=mig.mode.current,mig.mode.pending`. */
  async migMode(index: number): Promise<MigMode> {
    const site = this.site("migMode", index);
    const fields = ["mig.mode.current", "mig.mode.pending"] as const;
    const [row] = parseCsvRows(await this.run(site, [`--query-gpu=${fields.join(",")}`, CSV, "-i", String(index)]), fields.length, site);
    if (!row) throw new GpuError("BAD_OUTPUT", site, `nvidia-smi printed no row for gpu ${index}`);
    return { current: migModeCell(row[0]!, fields[0], site), pending: migModeCell(row[1]!, fields[1], site) };
  }

  /** `nvidia-smi -i N -mig 0`; whether it took effect or waits for a reset, `migMode` tells. */
  async disableMigMode(index: number): Promise<void> {
    await this.run(this.site("disableMigMode", index), ["-i", String(index), "-mig", "0"]);
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  private initialised(op: string): number {
    if (this.count === undefined) throw new GpuError("UNINITIALIZED", { backend: this.name, op }, "call init() first");
    return this.count;
  }

  private site(op: GpuOp, index: number): GpuErrorSite & { device: number } {
    const site = { backend: this.name, op, device: index };
    checkIndex(site, this.initialised(op));
    return site;
  }

  /** One row of numeric fields for one GPU, one number per field. */
  private async queryNumbers<const F extends readonly string[]>(site: GpuErrorSite & { device: number }, fields: F): Promise<{ [K in keyof F]: number }> {
    const stdout = await this.run(site, [`--query-gpu=${fields.join(",")}`, CSV, "-i", String(site.device)]);
    const [row] = parseCsvRows(stdout, fields.length, site);
    if (!row) throw new GpuError("BAD_OUTPUT", site, `nvidia-smi printed no row for gpu ${site.device}`);
    return row.map((cell, i) => numberCell(cell, fields[i] ?? "?", site)) as { [K in keyof F]: number };
  }

  private async run(site: GpuErrorSite, args: string[], opts: { allowNotFound?: boolean } = {}): Promise<string> {
    const path = this.options.path ?? "nvidia-smi";
    const command = `${path} ${args.join(" ")}`;
    let result;
    try {
      result = await runCommand(path, args, { timeoutMs: this.options.timeoutMs ?? 30_000, env: this.options.env });
    } catch (error) {
      throw new GpuError("UNAVAILABLE", site, `cannot run ${path}: ${(error as Error).message}`, { cause: error });
    }
    if (result.code === 0) return result.stdout;
    if (opts.allowNotFound && result.code === NvmlReturn.NOT_FOUND) return result.stdout;
    const message = (result.stderr.trim() || result.stdout.trim() || "no output").replaceAll("\n", " | ");
    if (result.code === null) throw new GpuError("DRIVER", site, `${command} was stopped by ${result.signal ?? "a signal"} (timeout?): ${message}`);
    throw new GpuError(gpuErrorCodeOf(result.code), site, `${command} exited with ${result.code}: ${message}`);
  }
}
