import { SERVER_POWER_OVERHEAD } from "../../model/power.ts";
import type { ProfileRow } from "../../schemas/profile.ts";
import type { Slo } from "../../schemas/request-class.ts";
import type { OperatingOption, OptionSet } from "../operating-options.ts";
import { meetsSlo, sloExcess } from "../slo.ts";

/**
 * Premium per req/s served outside the SLO, as a multiple of the dearest cost per req/s of any
 * point within an SLO: at 10x or more, a point within the SLO always costs less, so one that
 * misses is used only where no point within it has room. It grows with how far the point misses
 * (x (1 + excess)), so the closest point is preferred, and stays below `FALLBACK_PREMIUM_CAP`.
 */
export const FALLBACK_PREMIUM = 10;
/** Cap on the premium (same unit), below the unserved-load penalty (100, `servingFirst`): serving comes first. */
export const FALLBACK_PREMIUM_CAP = 50;

/**
 * The points of a model variant that miss their class's SLO but keep up with their load (stable),
 * grouped per (GPU, class, TP) like `operatingOptions`, each with its `sloExcess`. What a class
 * runs on when no point within its SLO exists or has room. `cost` is left 0 for the caller.
 *
 * @example
 * const sets = nearMissOptions(table.rows, { model: "llama2-70b", variant: "base", slos });
 */
export function nearMissOptions(rows: readonly ProfileRow[], o: { model: string; variant: string; slos: Readonly<Record<string, Slo>> }): OptionSet[] {
  const sets = new Map<string, OptionSet>();
  for (const r of rows) {
    const slo = o.slos[r.classId];
    if (r.model !== o.model || r.variant !== o.variant || r.loadRps <= 0 || !r.stable || slo === undefined || meetsSlo(r, slo)) continue;
    const key = `${r.gpu}|${r.classId}|${r.tp}`;
    let set = sets.get(key);
    if (!set) sets.set(key, (set = { variant: o.variant, gpu: r.gpu, classId: r.classId, tp: r.tp, options: [] }));
    set.options.push({ mhz: r.mhz, loadRps: r.loadRps, powerW: r.peakPowerW * SERVER_POWER_OVERHEAD, e2eMs: r.e2eMs.p50, gpuPowerW: r.avgPowerW, cost: 0, sloExcess: Math.max(sloExcess(r, slo), 1e-9) });
  }
  return [...sets.values()];
}

/**
 * An option outside the SLO priced for the LP: its own cost plus, per req/s it serves, the premium
 * (`FALLBACK_PREMIUM` x (1 + excess), capped) times `dearestPerRps`.
 *
 * @example
 * priceFallback(option, 1.7, 0.02); // cost 1.7 + loadRps x 0.02 x min(50, 10 x (1 + excess))
 */
export function priceFallback(option: OperatingOption, ownCost: number, dearestPerRps: number): OperatingOption {
  const premium = Math.min(FALLBACK_PREMIUM_CAP, FALLBACK_PREMIUM * (1 + (option.sloExcess ?? 0)));
  return { ...option, cost: ownCost + option.loadRps * premium * dearestPerRps };
}

/**
 * Option sets within the SLO with the `missing` options (outside it) of the same (GPU, class, TP)
 * added, and sets of their own where a (GPU, class, TP) has only those.
 *
 * @example
 * withFallback(operatingOptions(rows, o), nearMissOptions(rows, o));
 */
export function withFallback(within: readonly OptionSet[], missing: readonly OptionSet[]): OptionSet[] {
  const key = (x: OptionSet) => `${x.variant}|${x.gpu}|${x.classId}|${x.tp}`;
  const merged = new Map(within.map((set) => [key(set), { ...set, options: [...set.options] }]));
  for (const set of missing) {
    const same = merged.get(key(set));
    if (same) same.options.push(...set.options);
    else merged.set(key(set), { ...set, options: [...set.options] });
  }
  return [...merged.values()];
}
