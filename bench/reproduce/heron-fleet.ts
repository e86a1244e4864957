import { basename, join } from "node:path";
import { dataFilesIn, loadAzureTrace, loadGrid } from "../../host-agent/data/read-data-file.ts";
import type { RequestTrace } from "../../src/core/data/azure-trace.ts";
import { windSeries } from "../../src/core/data/grid-series.ts";
import { gpuSpecs } from "../../src/core/model/gpu-specs.ts";
import { llmSpecs, type LlmSpec } from "../../src/core/model/llm-specs.ts";
import { SERVER_POWER_OVERHEAD } from "../../src/core/model/power.ts";
import { classLengthsFromScheme, withinContext } from "../../src/core/profiling/class-lengths.ts";
import { meetsSlo } from "../../src/core/planning/slo.ts";
import { isolatedLatencySlo } from "../../src/core/profiling/isolated-slo.ts";
import { defaultClocks, virtualProfile } from "../../src/core/profiling/virtual-profiler.ts";
import type { ClassId, SiteId } from "../../src/core/schemas/ids.ts";
import type { ProfileRow } from "../../src/core/schemas/profile.ts";
import type { ClassScheme, Slo } from "../../src/core/schemas/request-class.ts";
import type { FleetSite } from "../../src/core/sim/fleet/fleet-types.ts";
import { leastVariableSites } from "../../src/core/sim/fleet/complementary-sites.ts";
import { gpusForPower, windEnvelope } from "../../src/core/sim/fleet/power-envelope.ts";
import { constantSeries } from "../../src/core/sim/fleet/time-series.ts";
import { memo } from "./memo.ts";
import { classShares, schemeFromPercentiles } from "../../src/core/workload/class-scheme.ts";

/** Heron §2.2: each wind farm scaled to a 250 MW peak, compute right-sized at the 20th percentile of its output. */
export const HERON_PEAK_W = 250e6;
export const HERON_RIGHT_SIZE_PERCENTILE = 20;
/**
 * Heron §5 Data (2): the hourly wind series is replayed with its time dimension scaled by 0.25,
 * each hour of generation becoming one 15-minute slot (672 hours make the simulated week).
 */
export const HERON_WIND_TIME_SCALE = 0.25;
/** Life-cycle intensity of wind power (gCO2/kWh), as `bench sim` uses. */
const WIND_GCO2_PER_KWH = 11;
/** Heron §2.3 and §5: four farms, chosen among the candidates for the least variable summed output. */
export const HERON_SITE_COUNT = 4;

export interface HeronFleet {
  trace: RequestTrace;
  scheme: ClassScheme;
  profile: ProfileRow[];
  slo: Record<ClassId, Slo>;
  llm: LlmSpec;
  model: string;
  /** Sites whose power series start at the window's first hour and cover `hours`. */
  sites: FleetSite[];
  siteInputs: Array<{ id: string; file: string; gpus: number; provisionedMW: number }>;
  /** How the sites were picked from the candidate files, and the five least variable sets. */
  siteChoice: { rule: string; candidates: string[]; sets: Array<{ sites: string[]; cov: number }> };
  /** What the fleet's GPUs serve at the trace's class mix, power aside (see `perGpuCapacityRps`). */
  capacityRps: number;
}

export interface HeronFleetOptions {
  tracePath: string;
  /** Candidate wind farms (grid CSVs); with more than HERON_SITE_COUNT, the least variable set is used. */
  gridPaths: readonly string[];
  /** First hour of the wind series the sites see, and how many simulated hours they cover (at HERON_WIND_TIME_SCALE). */
  startHour: number;
  hours: number;
  quick: boolean;
  seed: number;
}

/**
 * Heron's setup: Llama2-70B on H100 sites at wind farms (the four least variable together among
 * the candidates, Heron §2.3; each series scaled to a 250 MW peak, GPUs for its 20th percentile
 * at peak power x 1.82), 9 classes from the trace's 33rd/66th length percentiles, a virtual
 * profile at TP 2/4/8 and seven clocks, and SLOs of 5x each class's isolated TP8 top-clock
 * latency. Site choice and right-sizing read the whole series; the sites then see it from
 * `startHour`, one hour of generation per 15 simulated minutes (Heron §5 Data (2)), for `hours`
 * simulated hours (4 x `hours` hours of the series).
 */
export async function heronFleet(o: HeronFleetOptions): Promise<HeronFleet> {
  const llm = llmSpecs["llama2-70b"];
  // Llama2-70B's context is 4096 tokens: a longer request is served with its prompt cut to fit, so
  // the classes, the profile and the requests served all have the lengths an engine would take.
  const loaded = await loadAzureTrace(o.tracePath);
  const trace = { ...loaded, requests: loaded.requests.map((r) => withinContext(r, llm.maxContext)) };
  const scheme = schemeFromPercentiles(trace.requests);
  const classes = classLengthsFromScheme(scheme, trace.requests);
  const gpu = gpuSpecs["H100-80GB"];
  // The profile depends on the trace's lengths and the seed only: a sweep's windows share it.
  const profile = memo(`heron-profile|${o.tracePath}|${o.quick}|${o.seed}`, () => virtualProfile(
    o.quick
      ? { llm, gpu, tps: [4, 8], clocksMhz: defaultClocks(gpu, 3), classes, loadFractions: [0.1, 0.3, 0.5], requestsPerPoint: 30, seed: o.seed }
      : { llm, gpu, tps: [2, 4, 8], clocksMhz: defaultClocks(gpu), classes, loadFractions: [0.05, 0.1, 0.2, 0.3, 0.4, 0.5], requestsPerPoint: 100, seed: o.seed },
  ).rows);
  const candidates = await Promise.all(o.gridPaths.map(async (file) => ({ file, wind: windSeries((await loadGrid(file)).rows) })));
  const ids = candidates.reduce<string[]>((taken, c) => [...taken, uniqueId(basename(c.file).split(/[-.]/)[0]!.toLowerCase(), taken)], []);
  const sets = leastVariableSites(candidates.map((c) => c.wind.values), Math.min(HERON_SITE_COUNT, candidates.length));
  const sites: FleetSite[] = [];
  const siteInputs: HeronFleet["siteInputs"] = [];
  for (const i of sets[0]!.sites) {
    const { file, wind } = candidates[i]!;
    const id = ids[i]!;
    const intervalS = 3600 * HERON_WIND_TIME_SCALE;
    const { envelope, provisionedW } = windEnvelope({ name: `${id} WND`, unit: "MW", startS: 0, intervalS, values: wind.values }, HERON_PEAK_W, HERON_RIGHT_SIZE_PERCENTILE);
    const samples = Math.ceil((o.hours * 3600) / intervalS);
    const values = envelope.values.slice(o.startHour, o.startHour + samples);
    if (values.length < samples) throw new RangeError(`${file} has ${envelope.values.length} hours; the window needs hours ${o.startHour} to ${o.startHour + samples}`);
    const gpus = gpusForPower(provisionedW, gpu.tdpW, SERVER_POWER_OVERHEAD);
    sites.push({ id: id as SiteId, gpu, gpus, power: { ...envelope, values }, carbon: constantSeries(`${id} wind`, "gCO2/kWh", WIND_GCO2_PER_KWH, o.hours * 3600) });
    siteInputs.push({ id, file, gpus, provisionedMW: round(provisionedW / 1e6) });
  }
  const siteChoice = {
    rule: candidates.length > HERON_SITE_COUNT ? `the ${HERON_SITE_COUNT} of ${candidates.length} candidates whose summed WND output, each scaled to the same peak, has the lowest coefficient of variation over the whole series (Heron §2.3)` : "every candidate given",
    candidates: ids,
    sets: sets.slice(0, 5).map((x) => ({ sites: x.sites.map((i) => ids[i]!), cov: round(x.cov) })),
  };
  const slo = Object.fromEntries(classes.map((c) => [c.classId, isolatedLatencySlo(llm, gpu, c, 5)])) as Record<ClassId, Slo>;
  const gpus = sites.reduce((s, x) => s + x.gpus, 0);
  return { trace, scheme, profile, slo, llm, model: llm.id, sites, siteInputs, siteChoice, capacityRps: gpus * perGpuCapacityRps(profile, slo, classShares(scheme, trace.requests)) };
}

/**
 * Req/s one GPU serves at a class mix, each class on its best profiled TP at the top clock (the
 * highest SLO-meeting load per GPU): the yardstick load multipliers are expressed in. A class no
 * point serves within its SLO counts at its highest stable load: its requests still take GPU time
 * (the coding-like mix's LS, a 2-4K prompt with a few output tokens, misses its TBT SLO at every
 * point: a token gap that meets another request's prefill is most of its few gaps).
 */
export function perGpuCapacityRps(profile: readonly ProfileRow[], slo: Readonly<Record<string, Slo>>, shares: Readonly<Record<string, number>>): number {
  const topMhz = Math.max(...profile.map((r) => r.mhz));
  const gpuSecondsPerRequest = Object.entries(shares).reduce((s, [c, share]) => {
    const atTop = profile.filter((r) => r.classId === c && r.mhz === topMhz);
    const withinSlo = atTop.filter((r) => meetsSlo(r, slo[c]!));
    const usable = withinSlo.length > 0 ? withinSlo : atTop.filter((r) => r.stable);
    return share > 0 ? s + share / Math.max(1e-9, ...usable.map((r) => r.loadRps / r.tp)) : s;
  }, 0);
  return 1 / gpuSecondsPerRequest;
}

/**
 * The fleet at 1/`divisor` of its size: each site's GPUs (rounded, at least one TP8 server's
 * worth) and power envelope divided alike, so power per GPU and the sites' shares stay. What the
 * per-request hour runs on: Heron's fleet serves tens of thousands of requests a second, which an
 * engine per replica cannot simulate in minutes.
 */
export function scaledFleet(fleet: HeronFleet, divisor: number): HeronFleet {
  const sites = fleet.sites.map((s) => {
    const gpus = Math.max(8, Math.round(s.gpus / divisor));
    const k = gpus / s.gpus;
    return { ...s, gpus, power: { ...s.power, name: `${s.power.name} x ${k.toFixed(5)}`, values: s.power.values.map((w) => w * k) } };
  });
  const gpus = (list: readonly { gpus: number }[]) => list.reduce((n, s) => n + s.gpus, 0);
  return { ...fleet, sites, capacityRps: (fleet.capacityRps * gpus(sites)) / gpus(fleet.sites) };
}

function uniqueId(id: string, taken: readonly string[]): string {
  let candidate = id;
  for (let n = 2; taken.includes(candidate); n++) candidate = `${id}${n}`;
  return candidate;
}

/** The default candidate wind farms: every grid CSV under `dataDir`/grid-2022 (their WND columns). */
export async function defaultWindFiles(dataDir: string): Promise<string[]> {
  return dataFilesIn(join(dataDir, "grid-2022"), ".csv");
}

function round(x: number): number {
  return Math.round(x * 1000) / 1000;
}
