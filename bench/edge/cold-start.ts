import type { Miniflare } from "miniflare";
import { descendants, threadCpuMs } from "./process-cpu.ts";

/** One cold start of a Worker in local workerd. */
export interface ColdStart {
  /** From asking Miniflare for the Worker to workerd listening: process start and script load. */
  readyMs: number;
  /** The first request (GET /healthz) on the fresh isolate; it must answer 200. */
  firstResponseMs: number;
  /** CPU time workerd used from its start to the first response (null without /proc). */
  cpuMs: number | null;
}

/** Medians over the runs; workerd's CPU also as its quartiles, to show the spread. */
export interface ColdStarts {
  readyMs: number;
  firstResponseMs: number;
  cpuMs: number | null;
  cpuQuartilesMs: [number, number] | null;
}

/**
 * `runs` cold starts of each Worker (keyed by name; `start` makes a fresh Miniflare for it), taken
 * in turns so load drifts hit each alike.
 */
export async function measureColdStarts(workers: Record<string, () => Miniflare>, runs: number, started: (mf: Miniflare) => void): Promise<Record<string, ColdStarts>> {
  const samples: Record<string, ColdStart[]> = Object.fromEntries(Object.keys(workers).map((k) => [k, []]));
  for (let i = 0; i < runs; i++) for (const [name, start] of Object.entries(workers)) samples[name]!.push(await coldStart(start, started));
  return Object.fromEntries(
    Object.entries(samples).map(([name, s]) => {
      const cpu = s.map((x) => x.cpuMs);
      const known = cpu.includes(null) ? null : (cpu as number[]);
      return [name, { readyMs: quantile(s.map((x) => x.readyMs), 0.5), firstResponseMs: quantile(s.map((x) => x.firstResponseMs), 0.5), cpuMs: known && quantile(known, 0.5), cpuQuartilesMs: known && [quantile(known, 0.25), quantile(known, 0.75)] }];
    }),
  );
}

async function coldStart(start: () => Miniflare, started: (mf: Miniflare) => void): Promise<ColdStart> {
  const before = new Set(descendants() ?? []);
  const t0 = performance.now();
  const mf = start();
  started(mf);
  try {
    const url = await mf.ready;
    const t1 = performance.now();
    const response = await fetch(new URL("/healthz", url));
    await response.arrayBuffer();
    if (!response.ok) throw new Error(`cold start: GET /healthz answered ${response.status}`);
    const t2 = performance.now();
    const workerd = (descendants() ?? []).filter((pid) => !before.has(pid));
    return { readyMs: t1 - t0, firstResponseMs: t2 - t1, cpuMs: threadCpuMs(workerd) };
  } finally {
    await mf.dispose();
  }
}

/** The q-quantile, interpolated between the nearest ranks. */
function quantile(xs: readonly number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const at = q * (s.length - 1);
  const lo = Math.floor(at);
  return s[lo]! + (s[Math.min(lo + 1, s.length - 1)]! - s[lo]!) * (at - lo);
}
