import { keepsUp } from "../../src/core/profiling/profile-point.ts";
import { sampleLengths } from "../../src/core/profiling/class-lengths.ts";
import { poissonRequests } from "../../src/core/profiling/steady-load.ts";
import { forkRng, seededRng } from "../../src/core/ports/rng.ts";
import type { ClassId } from "../../src/core/schemas/ids.ts";
import type { LatencySummary, ProfileRow } from "../../src/core/schemas/profile.ts";
import { linearPercentile, sortedAscending } from "../../src/core/stats/percentile.ts";
import type { GpuBackend } from "../gpu/gpu-backend.ts";
import { sleep } from "../util/backoff.ts";
import type { ProfileGrid, ProfilePoint } from "./profile-grid.ts";
import { streamedRequest, type RequestOutcome } from "./streamed-request.ts";

/** Share of a point's first requests left out of its latencies (the queue's warm-up), as the virtual profiler does. */
const WARM_UP_SHARE = 0.1;

/** Where a point runs: an engine's OpenAI API on some GPUs, and the clock the engine runs on. */
export interface PointTarget {
  url: string;
  /** The name the engine serves the model under. */
  servedName: string;
  gpus: readonly number[];
  backend: GpuBackend;
  /** Engine time, ms (a simulated site's clock; the wall clock on real hardware). */
  nowMs(): number;
  /** Engine ms per wall ms. */
  speed: number;
}

/**
 * Measures one operating point as Heron profiles real GPUs: the GPUs locked at the point's clock,
 * `requestsPerPoint` streamed requests of the class arriving as a Poisson process at its rate
 * (each point its own random stream from the seed), the GPUs' power sampled every 100 ms (engine
 * time) and their energy counters read before and after. Power is of the instance's GPUs (no
 * server overhead); energy per request is the counters' difference over the requests served.
 *
 * @example
 * const row = await measurePoint(grid, point, target); // a ProfileRow, stable: false if it fell behind
 */
export async function measurePoint(grid: ProfileGrid, point: ProfilePoint, target: PointTarget): Promise<ProfileRow> {
  const gpus = target.gpus.slice(0, point.tp);
  for (const g of gpus) await target.backend.lockGraphicsClocks(g, point.mhz, point.mhz);
  const rng = forkRng(seededRng(grid.seed), point.index + 1);
  const requests = poissonRequests(rng, point.loadRps, grid.requestsPerPoint, (r) => sampleLengths(r, point.cls, grid.maxContext));
  const energyOf = async () => (await Promise.all(gpus.map((g) => target.backend.totalEnergyJ(g)))).reduce((a, b) => a + b, 0);
  const startMs = target.nowMs();
  const startJ = await energyOf();
  const sampler = samplePower(target, gpus);
  const wallStart = performance.now();
  const outcomes = await Promise.all(
    requests.map(async (r) => {
      await sleep(Math.max(0, (r.arrivalS * 1e3) / target.speed - (performance.now() - wallStart)));
      return streamedRequest(target.url, target.servedName, r.inputTokens, r.outputTokens, target.speed);
    }),
  );
  const peakPowerW = await sampler.stop();
  const energyJ = Math.max(0, (await energyOf()) - startJ);
  const seconds = Math.max(1e-3, (target.nowMs() - startMs) / 1e3);
  const served = outcomes.filter((o) => o.ok).length;
  const kept = outcomes.slice(Math.floor(outcomes.length * WARM_UP_SHARE)).filter((o) => o.ok);
  return {
    model: grid.model,
    variant: "base",
    gpu: grid.gpu,
    tp: point.tp,
    mhz: point.mhz,
    classId: point.cls.classId as ClassId,
    loadRps: point.loadRps,
    ttftMs: summary(kept.map((o) => o.ttftMs)),
    tbtMs: summary(kept.map((o) => o.tbtMs).filter(Number.isFinite)),
    e2eMs: summary(kept.map((o) => o.e2eMs)),
    peakPowerW: round(peakPowerW),
    avgPowerW: round(energyJ / seconds),
    energyPerRequestJ: round(served > 0 ? energyJ / served : 0),
    stable: served === outcomes.length && keepsUp(outcomes.map((o: RequestOutcome) => ({ ttftS: o.ok ? o.ttftMs / 1e3 : Infinity }))),
  };
}

/** The instance's summed GPU power every 100 ms of engine time until stopped; resolves to its peak. */
function samplePower(target: PointTarget, gpus: readonly number[]): { stop(): Promise<number> } {
  let peak = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const powers = await Promise.all(gpus.map((g) => target.backend.powerUsageW(g)));
      peak = Math.max(peak, powers.reduce((a, b) => a + b, 0));
      await sleep(Math.max(5, 100 / target.speed));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return peak;
    },
  };
}

function summary(values: number[]): LatencySummary {
  const s = sortedAscending(values);
  if (s.length === 0) return { p50: 0, p99: 0, mean: 0 };
  return { p50: round(linearPercentile(s, 50)), p99: round(linearPercentile(s, 99)), mean: round(s.reduce((a, b) => a + b, 0) / s.length) };
}

const round = (x: number) => Math.round(x * 1000) / 1000;
