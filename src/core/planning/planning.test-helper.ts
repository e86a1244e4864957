import { gpuSpecs } from "../model/gpu-specs.ts";
import { llmSpecs } from "../model/llm-specs.ts";
import { DYNAMOLLM_CLASS_LENGTHS } from "../profiling/class-lengths.ts";
import { defaultClocks, virtualProfile } from "../profiling/virtual-profiler.ts";
import type { ClassId, GpuType } from "../schemas/ids.ts";
import type { RouteTarget, Routing } from "../schemas/plan.ts";
import type { ProfileRow } from "../schemas/profile.ts";
import type { Slo } from "../schemas/request-class.ts";
import { PlanningInput } from "./planning-input.ts";
import { isolatedSlos } from "./slo.ts";

/** SLOs nothing violates. */
export const LOOSE_SLO: Slo = { ttftMs: 1e9, tbtMs: 1e9 };

/** A hand-made profile row: latencies in ms, power of the whole instance in W (no server overhead). */
export function row(p: { classId: string; tp?: number; mhz?: number; loadRps: number; e2eMs: number; peakPowerW: number; gpu?: GpuType; ttftMs?: number }): ProfileRow {
  const lat = (ms: number) => ({ p50: ms, p99: ms });
  return {
    model: "m",
    variant: "base",
    gpu: p.gpu ?? "H100-80GB",
    tp: p.tp ?? 8,
    mhz: p.mhz ?? 1980,
    classId: p.classId as ClassId,
    loadRps: p.loadRps,
    ttftMs: lat(p.ttftMs ?? 100),
    tbtMs: lat(20),
    e2eMs: lat(p.e2eMs),
    peakPowerW: p.peakPowerW,
    avgPowerW: 0.8 * p.peakPowerW,
    energyPerRequestJ: (0.8 * p.peakPowerW) / p.loadRps,
    stable: true,
  };
}

interface InputSketch {
  sites: { id: string; gpus: number; powerW: number; gpu?: GpuType; carbonGPerKwh?: number; rttMs?: number }[];
  demand: Record<string, number>;
  profile: readonly ProfileRow[];
  slos?: Record<string, Slo>;
  previous?: unknown;
  model?: string;
  version?: number;
}

/** A parsed planning input from a sketch: classes in `demand` order, 3x3-style bins by position. */
export function planningInput(s: InputSketch): PlanningInput {
  return PlanningInput.parse({
    version: s.version ?? 1,
    nowMs: 1_700_000_000_000,
    model: s.model ?? "m",
    sites: s.sites.map(({ gpu, gpus, ...x }) => ({ ...x, gpus: [{ type: gpu ?? "H100-80GB", count: gpus }] })),
    classes: Object.entries(s.demand).map(([id, demandRps], i) => ({ id, inputBin: Math.floor(i / 3), outputBin: i % 3, slo: s.slos?.[id] ?? LOOSE_SLO, demandRps })),
    profile: s.profile,
    previous: s.previous,
  });
}

/**
 * A deterministic Heron-shaped profile from closed-form curves (fast, monotone): per class, TP and
 * clock, load levels at fractions of the instance's capacity; latency grows with load and falls
 * with clock and TP, power grows with clock and load. Not calibrated: for planner tests only.
 */
export function syntheticProfile(o: { classes: readonly string[]; tps?: readonly number[]; clocks?: readonly number[]; loadFractions?: readonly number[]; gpu?: GpuType; model?: string }): ProfileRow[] {
  const tps = o.tps ?? [2, 4, 8];
  const clocks = o.clocks ?? [810, 1200, 1590, 1980];
  const fractions = o.loadFractions ?? [0.2, 0.4, 0.6, 0.8];
  return o.classes.flatMap((classId, ci) => {
    const size = 1 + ci * 0.5;
    return tps.flatMap((tp) =>
      clocks.flatMap((mhz) =>
        fractions.map((u) => {
          const f = mhz / 1980;
          const capacity = (2 * tp ** 0.8 * f ** 0.5) / size;
          const e2e = (2000 * size * (1 + 2 * u ** 3)) / (f ** 0.6 * tp ** 0.5);
          const peak = tp * (120 + 580 * f ** 2.2 * (0.5 + 0.5 * u));
          return { ...row({ classId, tp, mhz, loadRps: capacity * u, e2eMs: e2e, peakPowerW: peak, gpu: o.gpu, ttftMs: e2e / 20 }), model: o.model ?? "m" };
        }),
      ),
    );
  });
}

let heronTable: ProfileRow[] | undefined;

/**
 * Heron's profile shape from the virtual profiler: Llama2-70B on H100, 9 classes x TP {2,4,8} x 7
 * clocks x 6 load levels (few requests per point: about a second to build), with its SLOs.
 */
export function heronShapedProfile(): { rows: ProfileRow[]; slos: Record<ClassId, Slo> } {
  const gpu = gpuSpecs["H100-80GB"];
  heronTable ??= virtualProfile({ llm: llmSpecs["llama2-70b"], gpu, tps: [2, 4, 8], clocksMhz: defaultClocks(gpu), classes: DYNAMOLLM_CLASS_LENGTHS, loadFractions: [0.1, 0.25, 0.4, 0.55, 0.7, 0.85], requestsPerPoint: 20, seed: 7 }).rows;
  return { rows: heronTable, slos: isolatedSlos(heronTable, { gpu: "H100-80GB" }) };
}

/** A plan's or delta's routing by plain class name (the schema keys it by the branded ClassId). */
export function routes(x: { routing: Routing }): Record<string, RouteTarget[] | undefined> {
  return x.routing;
}

/** A plan's shortfall by plain class name. */
export function shortOf(x: { shortfall: Readonly<Record<string, number | undefined>> }): Record<string, number | undefined> {
  return { ...x.shortfall };
}
