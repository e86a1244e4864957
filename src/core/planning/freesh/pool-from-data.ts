import type { FreeshProfiles } from "../../data/freesh-profiles.ts";
import { FREESH_TYPES, type FreeshDemand, type FreeshEmissions } from "../../data/freesh-series.ts";
import type { FreeshPoolInputIn } from "./pool-input.ts";

/** FREESH re-plans every 30 minutes: an episode is 6 steps of 5 minutes (48 episodes a day). */
export const FREESH_EPISODE_STEPS = 6;

/** FREESH's inputs as the data loaders return them. */
export interface FreeshData {
  profiles: FreeshProfiles;
  emissions: FreeshEmissions;
  demand: { a: FreeshDemand; b: FreeshDemand };
}

export interface EpisodeOptions {
  /** Episode number 0..47; its steps are 6e..6e+5. */
  episode: number;
  /** Steps in the horizon (default one episode, 6). */
  steps?: number;
  objective?: "carbon" | "energy";
  /** Headroom α (FREESH's stored run: 1.1). */
  alpha?: number;
  /** The forecast is divided by β before use (FREESH's stored run: 2). */
  beta?: number;
  /** Scales every site's GPU counts (for sensitivity runs such as FREESH Fig. 10). */
  gpuScale?: number;
}

/**
 * FREESH's episode as a pool input: 3 sites with their A100/H100 counts, the 4 work modes, both
 * partitions with their profiles and demand (÷ β), the sites' marginal emission rates over the
 * episode. Each type's latency tolerance is `latency_scale` (5) x its fastest configuration in
 * that partition, our reading of "SLO = 5 x Lat" (DESIGN §6); TBT/TTFT SLOs come from the file.
 *
 * @example
 * const input = freeshEpisodeInput(await loadFreesh("data/freesh"), { episode: 24 });
 */
export function freeshEpisodeInput(data: FreeshData, o: EpisodeOptions): FreeshPoolInputIn {
  const { profiles } = data;
  const steps = o.steps ?? FREESH_EPISODE_STEPS;
  const first = o.episode * FREESH_EPISODE_STEPS;
  const slots = Array.from({ length: steps }, (_, k) => first + k);
  const beta = o.beta ?? 2;
  const scale = o.gpuScale ?? 1;
  const partitions = (["a", "b"] as const).map((name) => {
    const p = profiles.partitions[name];
    const configs = profiles.types.map((_, r) =>
      profiles.modes.map((_, m) => ({
        maxQps: p.max_qps[r]![m]!,
        powerW: p.power_w[r]![m]!,
        latencyS: p.latency_s[r]![m]!,
        tbtMs: p.tbt_ms[r]![m]!,
        ttftMs: p.ttft_ms[r]![m]!,
      })),
    );
    const latencyToleranceS = configs.map((row) => profiles.slo.latency_scale * Math.min(...row.filter((c) => c.maxQps > 0).map((c) => c.latencyS)));
    const demandQps = slots.map((slot) => FREESH_TYPES.map((t) => (data.demand[name].rows[slot]?.[t] ?? 0) / beta));
    return { name, configs, demandQps, latencyToleranceS };
  });
  return {
    types: [...profiles.types],
    modes: profiles.modes.map((m) => ({ name: m.name, gpus: { ...m.gpus } })),
    sites: profiles.sites_gpus.map((g, n) => ({
      name: data.emissions.siteNames[n] ?? `site-${n}`,
      gpus: Object.fromEntries(Object.entries(g).map(([kind, count]) => [kind, Math.floor(count * scale)])),
    })),
    partitions,
    emissions: profiles.sites_gpus.map((_, n) => slots.map((slot) => data.emissions.bySite[n]?.[slot] ?? 0)),
    stepHours: data.emissions.slotMinutes / 60,
    alpha: o.alpha ?? 1.1,
    slo: { tbtMs: [...profiles.slo.tbt_ms], ttftMs: [...profiles.slo.ttft_ms] },
    objective: o.objective ?? "carbon",
  };
}
