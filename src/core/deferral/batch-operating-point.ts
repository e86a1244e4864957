import type { GpuSpec } from "../model/gpu-specs.ts";
import type { BatchRequestCost } from "../schemas/deferral.ts";
import type { ClassId } from "../schemas/ids.ts";
import type { ProfileRow } from "../schemas/profile.ts";

/** Where batch work runs on a GPU type: one TP and clock for every class, each class at its highest stable profiled load. */
export interface BatchOperatingPoint {
  tp: number;
  mhz: number;
  /** Per class: req/s one instance serves there, and what a request costs (GPU time; energy above idle at the wall). */
  classes: Record<ClassId, { capacityRps: number; cost: BatchRequestCost }>;
  /** Energy above idle per request at the class mix (J, at the wall): what the choice minimised. */
  mixEnergyJ: number;
}

/**
 * The operating point for batch work: batch has a deadline but no latency SLO, so each class runs
 * at the highest load the profile shows an instance keeping up with (stable), and among the
 * (TP, clock) pairs where every class of the mix has such a load, the one with the least energy
 * above idle per request at the mix. One TP for all classes, so batch instances fill the GPUs
 * interactive traffic leaves in whole instances. Energy counts what batch adds to the site: the
 * instance's draw above its GPUs' idle draw, times the server overhead.
 *
 * @example
 * const point = batchOperatingPoint(profile.rows, { model: "llama3-70b", gpu: gpuSpec("H100-80GB"), shares, overhead: 1.82 });
 * point.classes.LL.cost; // { gpuSeconds: ..., energyJ: ... }
 */
export function batchOperatingPoint(rows: readonly ProfileRow[], o: { model: string; variant?: string; gpu: GpuSpec; shares: Readonly<Record<string, number>>; overhead: number }): BatchOperatingPoint {
  const variant = o.variant ?? "base";
  const mix = Object.entries(o.shares).filter(([, share]) => share > 0) as Array<[ClassId, number]>;
  const best = new Map<string, ProfileRow>();
  for (const r of rows) {
    if (r.model !== o.model || r.variant !== variant || r.gpu !== o.gpu.type || !r.stable) continue;
    const key = `${r.tp}|${r.mhz}|${r.classId}`;
    if ((best.get(key)?.loadRps ?? -1) < r.loadRps) best.set(key, r);
  }
  const pairs = new Set([...best.keys()].map((k) => k.split("|").slice(0, 2).join("|")));
  let chosen: BatchOperatingPoint | undefined;
  for (const pair of pairs) {
    const [tp, mhz] = pair.split("|").map(Number) as [number, number];
    const points = mix.map(([c]) => best.get(`${pair}|${c}`));
    if (points.some((p) => !p)) continue;
    const classes: BatchOperatingPoint["classes"] = {};
    let mixEnergyJ = 0;
    points.forEach((p, i) => {
      const [c, share] = mix[i]!;
      const energyJ = (Math.max(0, p!.avgPowerW - tp * o.gpu.power.idleW) * o.overhead) / p!.loadRps;
      classes[c] = { capacityRps: p!.loadRps, cost: { gpuSeconds: tp / p!.loadRps, energyJ } };
      mixEnergyJ += share * energyJ;
    });
    const total = mix.reduce((s, [, share]) => s + share, 0);
    mixEnergyJ /= total;
    if (!chosen || mixEnergyJ < chosen.mixEnergyJ) chosen = { tp, mhz, classes, mixEnergyJ };
  }
  if (!chosen) throw new Error(`the profile has no (TP, clock) of ${o.model} on ${o.gpu.type} with a stable point for every class of the mix`);
  return chosen;
}
