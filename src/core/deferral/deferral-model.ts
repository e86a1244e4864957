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

/**
 * A cohort placed in its last on-time slot costs this much more (in units of the dearest request's
 * carbon) than anywhere else on time: that slot is kept for what cannot go earlier, so requests
 * that whole-request rounding leaves over still find room before the deadline.
 */
export const LAST_SLOT_RESERVE = 1;

export interface DeferralModelOptions {
  /** Charge LAST_SLOT_RESERVE for a cohort's last on-time slot (default true; a fluid optimum has no stragglers and leaves it out). */
  reserveLastSlot?: boolean;
}

/**
 * One LP column: requests of cohort `cohort` in (slot, site), in the expected or the firm
 * scenario (slot 0 is shared); `site` -1 is "left beyond the grid".
 */
export interface DeferralColumn {
  cohort: number;
  slot: number;
  site: number;
  scenario: "expected" | "firm";
}

/**
 * The deferral LP (pure): variables are the requests of each cohort run in each (slot, site)
 * where the site prices the cohort and has spare capacity, from the cohort's first slot to the
 * grid's end (fluid: a cohort's requests are its class mix in proportion), plus one per cohort
 * for what is left beyond the grid (charged as the dearest request on the grid, one slot after
 * its end). Each cohort's variables sum to its requests; each (slot, site) holds at most its spare
 * GPU-seconds and spare energy. The objective is carbon (energy x intensity, plus a tie-break for
 * sooner slots, and a premium on a cohort's last on-time slot) and, far above it, lateness:
 * request-slots past the deadline, so work runs on time where capacity allows and, where it does
 * not, as soon as it fits. Costs are scaled so that the dearest placement of a request costs 1.
 *
 * Where sites give firm capacity (what is there even if a forecast fails, e.g. no wind), a second
 * scenario places the same cohorts after slot 0 on firm capacity alone and is charged only for
 * lateness: slot 0, shared by both, then starts whatever keeps every deadline even if the
 * uncertain capacity never comes, and the expected scenario decides the rest on carbon.
 *
 * @example
 * const { model, columns } = deferralModel(input, cohortsOf(input));
 */
export function deferralModel(input: DeferralInput, cohorts: readonly Cohort[], options: DeferralModelOptions = {}): { model: LpModel; columns: Map<string, DeferralColumn> } {
  const lastSlotReserve = options.reserveLastSlot === false ? 0 : LAST_SLOT_RESERVE;
  const slots = input.sites[0]!.carbonGPerKwh.length;
  const slotS = input.slotMs / 1000;
  const intensity = (s: number, t: number) => input.sites[s]!.carbonGPerKwh[t]! + WAIT_TIE_BREAK_G_PER_KWH_PER_SLOT * t;
  let maxIntensity = 1e-9;
  input.sites.forEach((_, s) => {
    for (let t = 0; t < slots; t++) maxIntensity = Math.max(maxIntensity, intensity(s, t));
  });
  // The dearest request anywhere: the unit that lateness is priced in.
  let dearestPerRequestG = 1e-9;
  for (const c of cohorts) for (const x of c.perSite) if (x) dearestPerRequestG = Math.max(dearestPerRequestG, (x.energyJ / 3.6e6 / c.total) * maxIntensity);
  // Work left beyond the grid is charged as the dearest request on it, a slot after its end.
  const beyondGrid = 1 + (WAIT_TIE_BREAK_G_PER_KWH_PER_SLOT * slots) / maxIntensity;
  const hasFirm = input.sites.some((site) => site.firmSpareGpus !== undefined || site.firmSpareW !== undefined);

  const constraints: LpModel["constraints"] = {};
  const variables: LpModel["variables"] = {};
  const columns = new Map<string, DeferralColumn>();
  input.sites.forEach((site, s) => {
    for (let t = 0; t < slots; t++) {
      constraints[`g${t}_${s}`] = { max: site.spareGpus[t]! };
      constraints[`p${t}_${s}`] = { max: site.spareW[t]! / 1000 };
      if (!hasFirm || t === 0) continue;
      constraints[`fg${t}_${s}`] = { max: (site.firmSpareGpus ?? site.spareGpus)[t]! };
      constraints[`fp${t}_${s}`] = { max: (site.firmSpareW ?? site.spareW)[t]! / 1000 };
    }
  });
  cohorts.forEach((c, ci) => {
    const lateBy = (t: number) => Math.max(0, t - c.last);
    const reserve = (t: number) => (t === c.last && c.last > 0 ? lastSlotReserve : 0);
    const scenarios = hasFirm ? (["expected", "firm"] as const) : (["expected"] as const);
    for (const scenario of scenarios) {
      const [row, prefix] = scenario === "expected" ? [`w${ci}`, ""] : [`fw${ci}`, "f"];
      constraints[row] = { equal: c.total };
      variables[`${prefix}u${ci}`] = { cost: (scenario === "expected" ? beyondGrid : 0) + LATE_WEIGHT * lateBy(slots), [row]: 1 };
      columns.set(`${prefix}u${ci}`, { cohort: ci, slot: slots, site: -1, scenario });
    }
    c.perSite.forEach((use, s) => {
      if (!use) return;
      const site = input.sites[s]!;
      const per = { gpu: use.gpuSeconds / c.total / slotS, kw: use.energyJ / c.total / slotS / 1000 };
      for (let t = Math.min(c.first, slots); t < slots; t++) {
        const carbon = (use.energyJ / c.total / 3.6e6) * intensity(s, t);
        if (site.spareGpus[t]! > 0 && (site.spareW[t]! > 0 || use.energyJ === 0)) {
          const name = `x${ci}_${t}_${s}`;
          // Slot 0 is one decision for both scenarios.
          const shared = hasFirm && t === 0 ? { [`fw${ci}`]: 1 } : {};
          variables[name] = { cost: carbon / dearestPerRequestG + reserve(t) + LATE_WEIGHT * lateBy(t), [`w${ci}`]: 1, ...shared, [`g${t}_${s}`]: per.gpu, [`p${t}_${s}`]: per.kw };
          columns.set(name, { cohort: ci, slot: t, site: s, scenario: "expected" });
        }
        if (!hasFirm || t === 0 || constraints[`fg${t}_${s}`]!.max! <= 0 || (constraints[`fp${t}_${s}`]!.max! <= 0 && use.energyJ > 0)) continue;
        const name = `fx${ci}_${t}_${s}`;
        variables[name] = { cost: LATE_WEIGHT * lateBy(t), [`fw${ci}`]: 1, [`fg${t}_${s}`]: per.gpu, [`fp${t}_${s}`]: per.kw };
        columns.set(name, { cohort: ci, slot: t, site: s, scenario: "firm" });
      }
    });
  });
  return { model: { optimize: "cost", opType: "min", constraints, variables }, columns };
}
