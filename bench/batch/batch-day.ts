import { resolve } from "node:path";
import { CliError } from "../../lib/cli-error.ts";
import { loadAzureTrace, loadGrid } from "../../host-agent/data/read-data-file.ts";
import { localFleet, stackSitePowerW, windScaling } from "../../lib/stack/local-fleet.ts";
import type { StackConfig } from "../../lib/stack/stack-config.ts";
import { stackProfileTable } from "../../lib/stack/stack-profile.ts";
import type { RequestTrace } from "../../src/core/data/azure-trace.ts";
import { carbonSeries, windSeries } from "../../src/core/data/grid-series.ts";
import { gpuSpec, type GpuSpec } from "../../src/core/model/gpu-specs.ts";
import { llmSpec } from "../../src/core/model/llm-specs.ts";
import { DYNAMOLLM_CLASS_LENGTHS } from "../../src/core/profiling/class-lengths.ts";
import { defaultClocks, virtualProfile } from "../../src/core/profiling/virtual-profiler.ts";
import { WIND_LIFECYCLE_G_PER_KWH, type Fleet } from "../../src/core/schemas/fleet.ts";
import type { ClassId, SiteId } from "../../src/core/schemas/ids.ts";
import type { ProfileRow } from "../../src/core/schemas/profile.ts";
import type { Slo } from "../../src/core/schemas/request-class.ts";
import type { FleetSite } from "../../src/core/sim/fleet/fleet-types.ts";
import { classShares } from "../../src/core/workload/class-scheme.ts";
import { perGpuCapacityRps } from "../reproduce/heron-fleet.ts";

const HOUR_MS = 3_600_000;

/** The local stack's fleet over a stretch of its grid series, ready to simulate. */
export interface BatchDay {
  fleet: Fleet;
  trace: RequestTrace;
  gpu: GpuSpec;
  model: string;
  profile: ProfileRow[];
  slo: Record<ClassId, Slo>;
  shares: Record<ClassId, number>;
  /** The sites from the stretch's start, hourly, for `hours` hours. */
  sites: FleetSite[];
  /** The sites over `hours` hours from `fromMs` (on the hour, within the series), e.g. the day before. */
  sitesOver(fromMs: number, hours: number): FleetSite[];
  /** Req/s the fleet's GPUs serve at the trace's class mix, power aside (the yardstick of `--interactive-load`). */
  capacityRps: number;
  inputs: Record<string, unknown>;
}

/**
 * The local stack's default sites (`lib/stack`) over `hours` hours of the 2022H1 grid series
 * from `startMs`: wind farms right-sized at their percentile (each farm's whole series) and capped
 * at the site's full power, counted at wind's life-cycle intensity; the grid site at its full
 * power and its balancing authority's average intensity. The profile is the stack's (cached), or a
 * small one when `quick`.
 */
export async function batchDay(config: StackConfig, startMs: number, hours: number, quick: boolean, log: (line: string) => void): Promise<BatchDay> {
  const data = (p: string) => resolve(config.dataDir, p);
  const gpu = gpuSpec(config.gpuType);
  const fleet = localFleet(config, Object.fromEntries(config.sites.map((s) => [s.id, "http://127.0.0.1:1"])), Object.fromEntries(config.sites.map((s) => [s.id, 1])));
  const trace = await loadAzureTrace(data(config.trace));
  const profile = quick
    ? virtualProfile({ llm: llmSpec(config.model), gpu, tps: config.tps.filter((tp) => tp <= 4), clocksMhz: defaultClocks(gpu, 3), classes: DYNAMOLLM_CLASS_LENGTHS, loadFractions: [0.1, 0.3, 0.5], requestsPerPoint: 20, seed: config.seed }).rows
    : (await stackProfileTable(config, log)).rows;
  const series = await Promise.all(
    config.sites.map(async (s) => {
      const file = `grid-2022/${s.region}-2022H1.csv`;
      const rows = (await loadGrid(data(file))).rows;
      const fullW = stackSitePowerW(config, s);
      // Power (W) and intensity (gCO2/kWh) per hour of the file.
      if (s.kind === "wind") {
        const wind = windSeries(rows);
        const { wattsPerMw } = windScaling(config, s, wind);
        const power = wind.values.map((mw) => Math.min(fullW, mw * wattsPerMw));
        const input = { id: s.id, gpus: s.gpus, power: `${file} WND, right-sized at its p${s.rightSizingPercentile} (${Math.round(fullW)} W = every GPU at TDP x overhead), capped there`, carbon_g_per_kwh: WIND_LIFECYCLE_G_PER_KWH };
        return { site: s, file, epochMs: rows.map((r) => r.epochMs), power, carbon: power.map(() => WIND_LIFECYCLE_G_PER_KWH), input };
      }
      const carbon = carbonSeries(rows).values;
      return { site: s, file, epochMs: rows.map((r) => r.epochMs), power: carbon.map(() => fullW), carbon, input: { id: s.id, gpus: s.gpus, power: `grid, ${Math.round(fullW)} W`, carbon: `${file} avg_CI` } };
    }),
  );
  const sitesOver = (fromMs: number, hours: number): FleetSite[] =>
    series.map((x) => {
      const first = x.epochMs.indexOf(fromMs);
      if (first < 0 || first + hours > x.epochMs.length) throw new CliError(`--start: ${x.file} covers ${new Date(x.epochMs[0]!).toISOString()} to ${new Date(x.epochMs.at(-1)! + HOUR_MS).toISOString()}; the bench needs ${hours} hours from ${new Date(fromMs).toISOString()} (on the hour)`);
      const hourly = (name: string, unit: string, values: number[]) => ({ name, unit, startS: 0, intervalS: 3600, values: values.slice(first, first + hours) });
      return { id: x.site.id as SiteId, gpu, gpus: x.site.gpus, power: hourly(`${x.site.id} power`, "W", x.power), carbon: hourly(`${x.site.id} intensity`, "gCO2/kWh", x.carbon) };
    });
  const sites = sitesOver(startMs, hours);
  const siteInputs = series.map((x) => x.input);
  const shares = classShares(fleet.classScheme, trace.requests);
  const slo = Object.fromEntries(fleet.classes.map((c) => [c.id, c.slo])) as Record<ClassId, Slo>;
  const capacityRps = sites.reduce((n, s) => n + s.gpus, 0) * perGpuCapacityRps(profile, slo, shares);
  return {
    fleet,
    trace,
    gpu,
    model: config.model,
    profile,
    slo,
    shares,
    sites,
    sitesOver,
    capacityRps,
    inputs: { sites: siteInputs, model: `${config.model} on ${config.gpuType}, ${quick ? "a small virtual profile (--quick)" : "the local stack's virtual profile"} (TP ${[...new Set(profile.map((r) => r.tp))].join("/")}), SLOs ${"5x"} isolated latency at TP${Math.max(...config.tps)}`, trace: config.trace },
  };
}
