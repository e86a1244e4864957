import { HERON_SLO_FACTOR } from "../planning/slo.ts";
import { ecoRoute, type EcoRouteCase, type EcoRouter } from "../planning/greenserve/eco-route.ts";
import { decodeTime, type ExecutionContext } from "../model/iteration-time.ts";
import type { ClockSetting } from "../schemas/plan.ts";

/** A decode replica as the gateway sees it: what it runs now, and how many more it may take. */
export interface DecodeReplicaLoad {
  key: string;
  running: number;
  /** KV tokens its running requests hold (prompts and first tokens, as EcoRoute counts them). */
  kvTokens: number;
  free: number;
}

/**
 * EcoFreq's decode frequency set for an instance's plan clock: GreenServe's sweet spot and max
 * (the GPU's voltage knee and top clock) inside the plan's bounds; a locked clock is one level.
 *
 * @example
 * decodeFreqSet(gpuSpecs["H100-80GB"], { mode: "policy", policy: "ecofreq", minMhz: 1005, maxMhz: 1980 }); // [1395, 1980]
 */
export function decodeFreqSet(gpu: ExecutionContext["gpu"], clock: ClockSetting | undefined): number[] {
  if (clock?.mode === "locked") return [clock.mhz];
  const lo = clock?.minMhz ?? gpu.minMhz;
  const hi = clock?.maxMhz ?? gpu.maxMhz;
  const knee = Math.min(hi, Math.max(lo, gpu.power.voltageKneeMhz));
  return knee < hi ? [knee, hi] : [hi];
}

/**
 * freq(m) of EcoRoute on the performance model: the lowest frequency of `freqsMhz` whose decode
 * iteration at (N_req, N_kv) meets the ITL SLO, else the highest. The SLO defaults to Heron's
 * 5 x the isolated TBT (batch 1 at the top clock).
 *
 * @example
 * const freq = modelDecodeFreq({ llm, gpu, tp: 1 }, [1395, 1980]);
 * freq(256, 256 * 600); // 1980 once the batch crosses a GEMM tile
 */
export function modelDecodeFreq(ctx: Omit<ExecutionContext, "mhz">, freqsMhz: readonly number[], itlMs?: number): (requests: number, kvTokens: number) => number {
  const freqs = [...freqsMhz].sort((a, b) => a - b);
  const top = freqs[freqs.length - 1]!;
  const slo = itlMs ?? HERON_SLO_FACTOR * decodeTime({ ...ctx, mhz: top }, 1, 0).ms;
  return (requests, kvTokens) => {
    if (requests <= 0) return freqs[0]!;
    for (const mhz of freqs) if (decodeTime({ ...ctx, mhz }, requests, kvTokens).ms <= slo) return mhz;
    return top;
  };
}

/**
 * Picks the decode replica for a request with GreenServe's EcoRoute (Algorithm 2) over the
 * replicas that have a free slot. Keep one selector per pool of interchangeable decode replicas:
 * its round-robin turn (case ❶a) lives in it. With `pack` (Greenference's own policy), case ❶a
 * packs the load within GEMM tiles instead (`packedChoice`), so replicas with nothing to do fall
 * to idle power.
 *
 * @example
 * const select = decodeTargetSelector(modelDecodeFreq({ llm, gpu, tp: 1 }, [1395, 1980]));
 * select(600, [{ key: "d#0", running: 255, kvTokens: 1.5e5, free: 4 }, { key: "d#1", running: 10, kvTokens: 6e3, free: 4 }]); // { key: "d#1", rule: ... }
 */
export function decodeTargetSelector(decodeFreq: (requests: number, kvTokens: number) => number, o: { deltaMhz?: number; pack?: { tileRows: number } } = {}) {
  const router: EcoRouter = ecoRoute({ decodeFreq, ...o });
  return (inputTokens: number, replicas: readonly DecodeReplicaLoad[]): { key: string; rule: EcoRouteCase } | undefined => {
    const open = replicas.filter((r) => r.free > 0);
    if (open.length === 0) return undefined;
    const before = { ...router.rules };
    const index = router({ arrivalS: 0, inputTokens, outputTokens: 0 }, open.map((r, i) => ({ index: i, waiting: 0, running: r.running, kvTokens: r.kvTokens })));
    const rule = (Object.keys(before) as EcoRouteCase[]).find((k) => router.rules[k] > before[k])!;
    return { key: open[index]!.key, rule };
  };
}
