import type { LengthPair } from "../data/azure-trace.ts";
import type { EngineScheduling } from "../engine/engine-simulator.ts";
import { forkRng, seededRng, type Rng } from "../ports/rng.ts";
import type { GpuSpec } from "../model/gpu-specs.ts";
import type { LlmSpec } from "../model/llm-specs.ts";
import type { ProfileRow, ProfileTable } from "../schemas/profile.ts";
import type { ClassId } from "../schemas/ids.ts";
import { estimatedCapacityRps } from "./capacity.ts";
import { meanLengths, sampleLengths, withinContext, type ClassLengths } from "./class-lengths.ts";
import { isolatedLatencyMs } from "./isolated-slo.ts";
import { probeRequests } from "./probe-length.ts";
import { profilePoint } from "./profile-point.ts";
import { poissonRequests } from "./steady-load.ts";

export interface VirtualProfileOptions {
  llm: LlmSpec;
  gpu: GpuSpec;
  tps: readonly number[];
  clocksMhz: readonly number[];
  classes: readonly ClassLengths[];
  /** Load levels as fractions of the estimated max-clock capacity of each (TP, class). */
  loadFractions: readonly number[];
  requestsPerPoint: number;
  /**
   * Run each point for at least this many lifetimes of a request (the class's mean alone on the
   * instance at the point's clock), up to 4 x `requestsPerPoint` (`probeRequests`): a fixed count
   * of long requests at a high load ends before the queue shows, and the point looks as if it
   * kept up. Absent: `requestsPerPoint` each.
   */
  lifetimes?: number;
  seed: number;
  /**
   * Lengths seen per class id (a trace's requests of the class): a point's requests are drawn
   * from them, uniformly with replacement, instead of log-uniformly within the class's ranges,
   * so the profile measures the length mix that will be served. A class without any keeps its ranges.
   */
  observed?: Readonly<Record<string, readonly LengthPair[]>>;
  /** How the profiled engine fits prompts in beside decoding (default "prefill-first"). */
  scheduling?: EngineScheduling;
  /** Called after each point, for progress reporting. */
  onPoint?: (done: number, total: number) => void;
}

/** Whether `llm`'s weights fit in the memory of `tp` GPUs of `gpu` (a TP they do not fit is not profiled). */
export function weightsFit(llm: LlmSpec, gpu: GpuSpec, tp: number): boolean {
  return llm.totalParams * llm.bytesPerParam < tp * gpu.memoryGb * 1e9;
}

/** Seven clocks evenly spaced from 800 MHz to the GPU's max (DESIGN.md: 800..1980 on H100, ..1410 on A100). */
export function defaultClocks(gpu: GpuSpec, count = 7, lowMhz = 800): number[] {
  const step = (gpu.maxMhz - lowMhz) / (count - 1);
  // Supported clocks are multiples of the step; the lowest is rounded up so it stays >= lowMhz.
  return Array.from({ length: count }, (_, i) => (i === 0 ? Math.ceil : Math.round)((lowMhz + i * step) / gpu.clockStepMhz) * gpu.clockStepMhz);
}

/**
 * Profiles an instance type the way Heron and DynamoLLM profile real GPUs: for every TP degree,
 * clock, request class and load level, steady Poisson load runs through the engine model and the
 * point's latencies, power and energy are recorded. Load levels are the same absolute rates at
 * every clock of a (TP, class), so planners can trade clock against load. Each point has its own
 * random stream derived from the seed, so a table is reproducible point by point.
 */
export function virtualProfile(o: VirtualProfileOptions): ProfileTable {
  const rows: ProfileRow[] = [];
  const scheduling = o.scheduling ?? "prefill-first";
  const tps = o.tps.filter((tp) => weightsFit(o.llm, o.gpu, tp));
  const total = tps.length * o.clocksMhz.length * o.classes.length * o.loadFractions.length;
  const root = seededRng(o.seed);
  let done = 0;
  for (const tp of tps) {
    for (const [ci, cls] of o.classes.entries()) {
      const seen = o.observed?.[cls.classId] ?? [];
      const mean = seen.length > 0 ? meanOf(seen) : meanLengths(cls);
      const draw = seen.length > 0 ? drawnFrom(seen, o.llm.maxContext) : (r: Rng) => sampleLengths(r, cls, o.llm.maxContext);
      const capacity = estimatedCapacityRps({ llm: o.llm, gpu: o.gpu, tp, mhz: o.gpu.maxMhz }, mean.inputTokens, mean.outputTokens);
      for (const mhz of o.clocksMhz) {
        for (const [li, fraction] of o.loadFractions.entries()) {
          const loadRps = capacity * fraction;
          const rng = forkRng(root, ((tp * 131 + ci) * 1009 + li) * 7919 + mhz);
          const count = o.lifetimes === undefined ? o.requestsPerPoint : probeRequests(loadRps, isolatedLatencyMs({ llm: o.llm, gpu: o.gpu, tp, mhz }, mean.inputTokens, mean.outputTokens).e2eMs / 1e3, o.requestsPerPoint, o.lifetimes);
          const requests = poissonRequests(rng, loadRps, count, draw);
          const m = profilePoint({ llm: o.llm, gpu: o.gpu, tp, clock: mhz, scheduling }, requests);
          rows.push({
            model: o.llm.id,
            variant: "base",
            gpu: o.gpu.type,
            tp,
            mhz,
            classId: cls.classId as ClassId,
            loadRps,
            ttftMs: m.ttftMs,
            tbtMs: m.tbtMs,
            e2eMs: m.e2eMs,
            peakPowerW: m.peakPowerW,
            avgPowerW: m.avgPowerW,
            energyPerRequestJ: m.energyPerRequestJ,
            stable: m.stable,
          });
          o.onPoint?.(++done, total);
        }
      }
    }
  }
  return {
    version: 1,
    source: { kind: "virtual", details: { model: o.llm.id, gpu: o.gpu.type, seed: o.seed, requestsPerPoint: o.requestsPerPoint, ...(o.lifetimes === undefined ? {} : { lifetimes: o.lifetimes }), observedLengths: o.observed !== undefined, scheduling, loadFractions: o.loadFractions, classes: o.classes, simulated: true } },
    rows,
  };
}

function meanOf(lengths: readonly LengthPair[]): LengthPair {
  const sum = lengths.reduce((a, l) => ({ inputTokens: a.inputTokens + l.inputTokens, outputTokens: a.outputTokens + l.outputTokens }), { inputTokens: 0, outputTokens: 0 });
  return { inputTokens: sum.inputTokens / lengths.length, outputTokens: sum.outputTokens / lengths.length };
}

/** One of `seen`'s lengths at random (a copy: only its lengths, within the context). */
function drawnFrom(seen: readonly LengthPair[], maxContext: number): (rng: Rng) => LengthPair {
  return (rng) => {
    const { inputTokens, outputTokens } = seen[Math.floor(rng.next() * seen.length)]!;
    return withinContext({ inputTokens, outputTokens }, maxContext);
  };
}
