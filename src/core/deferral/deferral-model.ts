import type { LpModel } from "../ports/lp-solver.ts";
import type { DeferralInput } from "../schemas/deferral.ts";
import type { Cohort } from "./cohorts.ts";

/**
 * Carbon-equivalent added per slot of waiting, gCO2/kWh: breaks ties between equally clean slots
 * in favour of the sooner one (a forecast that holds the present flat makes all future wind slots
 * look alike). Over a day of 15-minute slots it adds under 1 g/kWh, below any real difference
 * between a grid and a wind site.
 */
export const WAIT_TIE_BREAK_G_PER_KWH_PER_SLOT = 0.01;
/**
 * A request late by one slot weighs this many times the dearest placement of a request
 * anywhere on the grid: deadlines come before carbon.
 */
export const LATE_WEIGHT = 1000;

/** One LP column: requests of cohort `cohort` in (slot, site); `site` -1 is "not placed on the grid". */
export interface DeferralColumn {
  cohort: number;
  slot: number;
  site: number;
}

/**
 * The deferral LP (pure): variables are the requests of each cohort run in each (slot, site)
 * where the site prices the cohort and has spare capacity, from the cohort's first slot to the
 * grid's end (fluid: a cohort's requests are its class mix in proportion), plus one per cohort
 * for what is left beyond the grid (charged as the dearest request on the grid, one slot after
 * its end). Each cohort's variables sum to its requests;
 * each (slot, site) holds at most its spare GPU-seconds and spare energy. The objective is
 * carbon (energy x intensity, plus a tie-break for sooner slots) and, far above it, lateness:
 * request-slots past the deadline,
 * so work runs on time where capacity allows and, where it does not, as soon as it fits.
 * Costs are scaled so that the dearest placement of a request costs 1.
 *
 * @example
 * const { model, columns } = deferralModel(input, cohortsOf(input));
 */
export function deferralModel(input: DeferralInput, cohorts: readonly Cohort[]): { model: LpModel; columns: Map<string, DeferralColumn> } {
  const slots = input.sites[0]!.carbonGPerKwh.length;
  const slotS = input.slotMs / 1000;
  const intensity = (s: number, t: number) => input.sites[s]!.carbonGPerKwh[t]! + WAIT_TIE_BREAK_G_PER_KWH_PER_SLOT * t;
  let maxIntensity = 1e-9;
  input.sites.forEach((_, s) => {
    for (let t = 0; t < slots; t++) maxIntensity = Math.max(maxIntensity, intensity(s, t));
  });
  // The dearest request anywhere: the unit that lateness is priced in.
  const dearestPerRequestG = Math.max(1e-9, ...cohorts.flatMap((c) => c.perSite.map((x) => (x ? (x.energyJ / 3.6e6 / c.total) * maxIntensity : 0))));

  // Work left beyond the grid is charged as the dearest request on it, a slot after its end.
  const beyondGrid = 1 + (WAIT_TIE_BREAK_G_PER_KWH_PER_SLOT * slots) / maxIntensity;
  const constraints: LpModel["constraints"] = {};
  const variables: LpModel["variables"] = {};
  const columns = new Map<string, DeferralColumn>();
  input.sites.forEach((site, s) => {
    for (let t = 0; t < slots; t++) {
      constraints[`g${t}_${s}`] = { max: site.spareGpus[t]! };
      constraints[`p${t}_${s}`] = { max: site.spareW[t]! / 1000 };
    }
  });
  cohorts.forEach((c, ci) => {
    constraints[`w${ci}`] = { equal: c.total };
    const lateBy = (t: number) => Math.max(0, t - c.last);
    const unplaced = `u${ci}`;
    variables[unplaced] = { cost: beyondGrid + LATE_WEIGHT * lateBy(slots), [`w${ci}`]: 1 };
    columns.set(unplaced, { cohort: ci, slot: slots, site: -1 });
    c.perSite.forEach((use, s) => {
      if (!use) return;
      const site = input.sites[s]!;
      for (let t = Math.min(c.first, slots); t < slots; t++) {
        if (site.spareGpus[t]! <= 0 || (site.spareW[t]! <= 0 && use.energyJ > 0)) continue;
        const name = `x${ci}_${t}_${s}`;
        const carbonG = (use.energyJ / c.total / 3.6e6) * intensity(s, t);
        variables[name] = {
          cost: carbonG / dearestPerRequestG + LATE_WEIGHT * lateBy(t),
          [`w${ci}`]: 1,
          [`g${t}_${s}`]: use.gpuSeconds / c.total / slotS,
          [`p${t}_${s}`]: use.energyJ / c.total / slotS / 1000,
        };
        columns.set(name, { cohort: ci, slot: t, site: s });
      }
    });
  });
  return { model: { optimize: "cost", opType: "min", constraints, variables }, columns };
}
