import type { BatchOperatingPoint } from "../../src/core/deferral/batch-operating-point.ts";
import type { DeferralWorld } from "../../src/core/deferral/deferral-world.ts";
import { spareCapacity } from "../../src/core/deferral/spare-capacity.ts";
import type { GpuSpec } from "../../src/core/model/gpu-specs.ts";
import type { BatchRequestCost, DeferrableWork, DeferralSite } from "../../src/core/schemas/deferral.ts";
import type { Plan } from "../../src/core/schemas/plan.ts";
import type { ProfileRow } from "../../src/core/schemas/profile.ts";
import type { FleetSite } from "../../src/core/sim/fleet/fleet-types.ts";
import { valueAt } from "../../src/core/sim/fleet/time-series.ts";

/**
 * What the scheduler knows at the start of a slot about the slots after it:
 * - `stack`: as the local stack's fleet knows it: carbon intensity as its Electricity Maps stand-in
 *   serves it (the recorded series), power held at the current value (the stack forecasts one slot);
 * - `persistence`: carbon and power both held at their current values;
 * - `perfect`: every slot as it turns out (interactive plans included).
 * Outside `perfect`, what interactive traffic will hold in a later slot is what the plan of that
 * time of day held the day before (the fleet keeps its plans), or where there is no such plan the
 * current plan's GPUs and reserved power scaled by the demand forecast (the interactive workload's
 * template, which the planners see too); and a wind farm's capacity after the current slot is not
 * firm: the scheduler keeps every deadline without it.
 */
export type ForecastMode = "stack" | "persistence" | "perfect";
export const FORECAST_MODES: readonly ForecastMode[] = ["stack", "persistence", "perfect"];

type Forecast = Pick<SlotTruth, "carbon" | "spareGpus" | "spareW"> & { firmSpareGpus: number; firmSpareW: number };

const maxUse = (a: { heldGpus: number; reservedW: number }, b: { heldGpus: number; reservedW: number }) => ({ heldGpus: Math.max(a.heldGpus, b.heldGpus), reservedW: Math.max(a.reservedW, b.reservedW) });

interface SlotTruth {
  carbon: number;
  availableW: number;
  heldGpus: number;
  reservedW: number;
  spareGpus: number;
  spareW: number;
}

/**
 * The bench's deferral world: each slot's spare capacity from the interactive plan the combined
 * planner made for it (recorded in the run without batch) and the site's power then, the site's
 * intensity, and the forecasts of `mode`.
 */
export function batchWorld(o: {
  startMs: number;
  slotS: number;
  slots: number;
  work: readonly DeferrableWork[];
  sites: readonly FleetSite[];
  plans: readonly Plan[];
  /** The plans of the day before `startMs`, slot by slot (the fleet's history), where there are any. */
  previousDay?: readonly Plan[];
  profile: readonly ProfileRow[];
  gpu: GpuSpec;
  point: BatchOperatingPoint;
  overhead: number;
  demandRps: (tS: number) => number;
  mode: ForecastMode;
  /** Seconds a batch instance takes to start. */
  startS: number;
  /** Sites whose capacity after the current slot is not firm (wind farms: the wind may not come). */
  windSites: ReadonlySet<string>;
}): DeferralWorld {
  const costs = Object.fromEntries(Object.entries(o.point.classes).map(([c, x]) => [c, x.cost])) as Record<string, BatchRequestCost>;
  const daySlots = Math.round(86_400 / o.slotS);
  const held = (plan: Plan, s: number, availableW: number, previous?: Plan) => {
    const site = o.sites[s]!;
    const at = (p: Plan | undefined) => p?.sites.find((x) => x.site === site.id);
    return spareCapacity(at(plan), { gpus: site.gpus, availableW, gpu: o.gpu, profile: o.profile, batchTp: o.point.tp, overhead: o.overhead, previous: at(previous) });
  };
  // A batch instance that starts with the slot serves for the slot less its start-up: the GPU time a slot's spare GPUs give.
  const usable = (o.slotS - o.startS) / o.slotS;
  const truth: SlotTruth[][] = o.sites.map((site, s) =>
    Array.from({ length: o.slots }, (_, k) => {
      const plan = o.plans[k];
      if (!plan) throw new Error(`no interactive plan was recorded for slot ${k}`);
      const availableW = valueAt(site.power, k * o.slotS);
      return { carbon: valueAt(site.carbon, k * o.slotS), availableW, ...held(plan, s, availableW, o.plans[k - 1]) };
    }),
  );
  const demandAt = (k: number) => o.demandRps((k + 0.5) * o.slotS);
  /** GPUs and power interactive traffic held at `tau` the day before (where that plan was made by slot `k`), scaled by the demand forecast. */
  const yesterday = (s: number, k: number, tau: number): { heldGpus: number; reservedW: number } | undefined => {
    const before = tau - daySlots;
    const plan = before >= 0 ? o.plans[before] : o.previousDay?.[o.previousDay.length + before];
    if (!plan || before > k) return undefined;
    const then = held(plan, s, 0);
    const scale = demandAt(tau) / demandAt(before);
    return { heldGpus: Math.min(o.sites[s]!.gpus, then.heldGpus * scale), reservedW: then.reservedW * scale };
  };
  /** The current plan's GPUs and reserved power scaled by the demand forecast. */
  const scaled = (s: number, k: number, tau: number): { heldGpus: number; reservedW: number } => {
    const now = held(o.plans[k]!, s, 0); // the plan's own instances, not this slot's handover
    const scale = demandAt(tau) / demandAt(k);
    return { heldGpus: Math.min(o.sites[s]!.gpus, now.heldGpus * scale), reservedW: now.reservedW * scale };
  };
  const spareWith = (s: number, availableW: number, use: { heldGpus: number; reservedW: number }) => {
    const site = o.sites[s]!;
    const free = site.gpus - Math.ceil(use.heldGpus - 1e-9);
    return {
      spareGpus: Math.floor(Math.max(0, free) / o.point.tp) * o.point.tp,
      spareW: Math.max(0, availableW - use.reservedW - (site.gpus - use.heldGpus) * o.gpu.power.idleW * o.overhead),
    };
  };
  const forecast = (s: number, k: number, tau: number): Forecast => {
    const now = truth[s]![k]!;
    const then = truth[s]![tau]!;
    if (tau === k || o.mode === "perfect") return { ...then, firmSpareGpus: then.spareGpus, firmSpareW: then.spareW };
    const byTemplate = scaled(s, k, tau);
    const expected = spareWith(s, now.availableW, yesterday(s, k, tau) ?? byTemplate);
    // Firm: none of a wind farm's; elsewhere the lower of the two forecasts of what interactive leaves.
    const firm = o.windSites.has(o.sites[s]!.id) ? { spareGpus: 0, spareW: 0 } : spareWith(s, now.availableW, maxUse(yesterday(s, k, tau) ?? byTemplate, byTemplate));
    return { carbon: o.mode === "stack" ? then.carbon : now.carbon, ...expected, firmSpareGpus: firm.spareGpus, firmSpareW: firm.spareW };
  };
  const sitesOver = (k: number, length: number, at: (s: number, tau: number) => Forecast): DeferralSite[] =>
    o.sites.map((site, s) => {
      const slots = Array.from({ length }, (_, i) => at(s, k + i));
      const firm = o.mode === "perfect" ? {} : { firmSpareGpus: slots.map((x) => x.firmSpareGpus * usable), firmSpareW: slots.map((x) => x.firmSpareW) };
      return { site: site.id, costs, carbonGPerKwh: slots.map((x) => x.carbon), spareGpus: slots.map((x) => x.spareGpus * usable), spareW: slots.map((x) => x.spareW), ...firm };
    });
  return {
    startMs: o.startMs,
    slotMs: o.slotS * 1000,
    slots: o.slots,
    work: o.work,
    sitesAt: (k, length) => sitesOver(k, length, (s, tau) => forecast(s, k, tau)),
    actual: (k) => sitesOver(k, 1, (s, tau) => ({ ...truth[s]![tau]!, firmSpareGpus: truth[s]![tau]!.spareGpus, firmSpareW: truth[s]![tau]!.spareW })),
  };
}
