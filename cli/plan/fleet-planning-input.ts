import { gpuSpec, gpuSpecs } from "../../src/core/model/gpu-specs.ts";
import { llmSpec } from "../../src/core/model/llm-specs.ts";
import { SERVER_POWER_OVERHEAD } from "../../src/core/model/power.ts";
import { PlanningInput } from "../../src/core/planning/planning-input.ts";
import { classLengthsFromScheme } from "../../src/core/profiling/class-lengths.ts";
import { defaultClocks, virtualProfile } from "../../src/core/profiling/virtual-profiler.ts";
import type { Fleet, Site } from "../../src/core/schemas/fleet.ts";
import { CliError } from "../cli-error.ts";

/** Outer length bounds of a scheme's first and last bins when profiling it: tokens. */
const SHORTEST = { inputTokens: 16, outputTokens: 8 };
const LONGEST = { inputTokens: 4096, outputTokens: 1024 };

/**
 * A planner's input for a fleet file: its sites (power: a fixed cap, a grid cap or all GPUs at
 * TDP x 1.82, and for wind the right-sized budget, peak x percentile; carbon intensity: see
 * `siteCarbonGPerKwh`), its classes with the given demand, and a virtual profile of its first model
 * on each GPU type it has (simulated), with those of the model's variants the profile has rows for.
 */
export function fleetPlanningInput(fleet: Fleet, demandRps: Record<string, number>, seed: number, carbonGPerKwh: Record<string, number> = {}): PlanningInput {
  const model = fleet.models[0]!.id;
  const llm = wrap(() => llmSpec(model));
  const types = [...new Set(fleet.sites.flatMap((s) => s.gpus.map((g) => g.type)))];
  const classes = classLengthsFromScheme(fleet.classScheme, [SHORTEST, LONGEST]);
  const profile = types.flatMap((type) => {
    const gpu = gpuSpecs[type];
    return virtualProfile({ llm, gpu, tps: [2, 4, 8], clocksMhz: defaultClocks(gpu), classes, loadFractions: [0.05, 0.1, 0.2, 0.3, 0.4, 0.5], requestsPerPoint: 60, seed }).rows;
  });
  const profiled = new Set(profile.map((r) => r.variant));
  const variants = fleet.variants.filter((v) => v.model === model && profiled.has(v.id)).map((v) => ({ id: v.id, quality: v.quality }));
  return PlanningInput.parse({
    version: 1,
    nowMs: 0,
    model,
    ...(variants.length > 0 ? { variants } : {}),
    sites: fleet.sites.map((s) => ({ id: s.id, gpus: s.gpus, powerW: sitePowerW(s), carbonGPerKwh: carbonGPerKwh[s.id] ?? siteCarbonGPerKwh(s) })),
    classes: fleet.classes.map((c) => ({ ...c, demandRps: demandRps[c.id] ?? 0 })),
    profile,
  });
}

function sitePowerW(site: Site): number {
  const p = site.power;
  if (p.kind === "fixed") return p.capW;
  if (p.kind === "wind") return p.peakMw * 1e6 * (p.rightSizingPercentile / 100);
  return p.capW ?? site.gpus.reduce((w, g) => w + g.count * gpuSpec(g.type).tdpW * SERVER_POWER_OVERHEAD, 0);
}

/**
 * A site's carbon intensity without a live signal: a fixed carbon source's value, else a wind site's
 * life-cycle intensity; undefined for grid signals (Electricity Maps, WattTime, ...), which a
 * planner then counts conservatively.
 */
export function siteCarbonGPerKwh(site: Site): number | undefined {
  if (site.carbon.kind === "fixed") return site.carbon.gPerKwh;
  if (site.power.kind === "wind") return site.power.lifecycleGPerKwh;
  return undefined;
}

function wrap<T>(f: () => T): T {
  try {
    return f();
  } catch (error) {
    throw new CliError((error as Error).message);
  }
}
