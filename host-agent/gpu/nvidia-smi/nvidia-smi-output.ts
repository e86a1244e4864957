import { z } from "zod";
import { GpuError, type GpuErrorSite } from "../gpu-error.ts";

/** What nvidia-smi prints in a CSV cell it cannot fill ("[N/A]", "[Not Supported]", ...). */
const UNAVAILABLE_CELL = /^\[?(N\/A|Not Supported|Unknown Error|Requested functionality has been deprecated)\]?$/i;
const NumberCell = z.string().regex(/^\d+(\.\d+)?$/, "a number").transform(Number);

/**
 * Splits `--format=csv,noheader,nounits` output into rows of exactly `columns` trimmed cells.
 *
 * @example
 * parseCsvRows("0, NVIDIA A100-SXM4-80GB\n", 2, site); // [["0", "NVIDIA A100-SXM4-80GB"]]
 */
export function parseCsvRows(stdout: string, columns: number, site: GpuErrorSite): string[][] {
  const lines = stdout.split("\n").map((line) => line.trim()).filter((line) => line !== "");
  const rows = z.array(z.array(z.string()).length(columns, `${columns} comma-separated columns`));
  const result = rows.safeParse(lines.map((line) => line.split(",").map((cell) => cell.trim())));
  if (!result.success) throw badOutput(site, stdout, z.prettifyError(result.error));
  return result.data;
}

/** A numeric cell; "[N/A]" and the like become NOT_SUPPORTED naming the field. */
export function numberCell(cell: string, field: string, site: GpuErrorSite): number {
  if (UNAVAILABLE_CELL.test(cell)) throw new GpuError("NOT_SUPPORTED", site, `nvidia-smi reports ${field} as ${cell}`);
  const result = NumberCell.safeParse(cell);
  if (!result.success) throw badOutput(site, cell, `${field} is not a number`);
  return result.data;
}

/** A `mig.mode.current` / `mig.mode.pending` cell: "Enabled" or "Disabled"; "[N/A]" (no MIG) becomes NOT_SUPPORTED. */
export function migModeCell(cell: string, field: string, site: GpuErrorSite): boolean {
  if (UNAVAILABLE_CELL.test(cell)) throw new GpuError("NOT_SUPPORTED", site, `nvidia-smi reports ${field} as ${cell}`);
  if (cell === "Enabled" || cell === "Disabled") return cell === "Enabled";
  throw badOutput(site, cell, `${field} is neither Enabled nor Disabled`);
}

/** A text cell, or undefined where nvidia-smi could not fill it. */
export function optionalTextCell(cell: string): string | undefined {
  return UNAVAILABLE_CELL.test(cell) || cell === "" ? undefined : cell;
}

/**
 * Graphics clocks at the highest memory clock, highest first, from
 * `--query-supported-clocks=mem,gr --format=csv,noheader,nounits` (one "mem, gr" pair a line).
 */
export function parseSupportedGraphicsClocks(stdout: string, site: GpuErrorSite): number[] {
  const pairs = parseCsvRows(stdout, 2, site).map(([mem = "", gr = ""]) => ({
    mem: numberCell(mem, "supported memory clock", site),
    gr: numberCell(gr, "supported graphics clock", site),
  }));
  if (pairs.length === 0) throw new GpuError("NOT_SUPPORTED", site, "nvidia-smi lists no supported clocks");
  const topMemory = Math.max(...pairs.map((p) => p.mem));
  const graphics = pairs.filter((p) => p.mem === topMemory).map((p) => p.gr);
  return [...new Set(graphics)].sort((a, b) => b - a);
}

/**
 * The MIG devices of GPU `index` in `nvidia-smi -L` output: the "MIG <profile> Device <n>: (UUID:
 * MIG-...)" lines under its "GPU <index>:" line, in the order listed.
 *
 * @example
 * parseMigDevices("GPU 0: NVIDIA A100 (UUID: GPU-1)\n  MIG 3g.40gb Device 0: (UUID: MIG-a)\n", 0, site); // [{ profile: "3g.40gb", uuid: "MIG-a" }]
 */
export function parseMigDevices(stdout: string, index: number, site: GpuErrorSite): { profile: string; uuid: string }[] {
  const devices: { profile: string; uuid: string }[] = [];
  let gpu: number | undefined;
  let found = false;
  for (const line of stdout.split("\n").map((l) => l.trim())) {
    const head = /^GPU (\d+):/.exec(line);
    if (head) {
      gpu = Number(head[1]);
      found ||= gpu === index;
      continue;
    }
    const mig = /^MIG (\S+)\s+Device\s+\d+: \(UUID: (MIG-[^)\s]+)\)$/.exec(line);
    if (mig && gpu === index) devices.push({ profile: mig[1]!, uuid: mig[2]! });
    else if (line.startsWith("MIG ") && gpu === index) throw badOutput(site, line, "a MIG line without a profile and UUID");
  }
  if (!found) throw new GpuError("NOT_FOUND", site, `nvidia-smi -L lists no GPU ${index}`);
  return devices;
}

function badOutput(site: GpuErrorSite, text: string, why: string): GpuError {
  const excerpt = text.length > 200 ? `${text.slice(0, 200)}...` : text;
  return new GpuError("BAD_OUTPUT", site, `cannot parse nvidia-smi output (${why.replaceAll("\n", "; ")}): ${JSON.stringify(excerpt)}`);
}
