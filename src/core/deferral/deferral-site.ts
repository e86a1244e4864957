import type { GpuSpec } from "../model/gpu-specs.ts";
import type { BatchRequestCost, DeferralSite } from "../schemas/deferral.ts";
import type { SiteId } from "../schemas/ids.ts";
import type { SitePlan } from "../schemas/plan.ts";
import type { ProfileRow } from "../schemas/profile.ts";
import type { BatchOperatingPoint } from "./batch-operating-point.ts";
import { spareCapacity } from "./spare-capacity.ts";

export interface DeferralSiteOptions {
  site: SiteId;
  gpus: number;
  gpu: GpuSpec;
  profile: readonly ProfileRow[];
  point: BatchOperatingPoint;
  /** Server power overhead (wall / GPU). */
  overhead: number;
  /** The site's interactive plan in force for slot 0, and the one before it (its handover holds GPUs in slot 0). */
  plan: SitePlan | undefined;
  previous?: SitePlan | undefined;
  /** Forecast per slot from slot 0 (one value per slot, same length): intensity (gCO2/kWh) and the power the site may draw (W at the wall). */
  carbonGPerKwh: readonly number[];
  availableW: readonly number[];
  /** False where later slots' power may not come (a wind farm): its capacity after slot 0 is not firm. */
  firm?: boolean;
  slotS: number;
  /** Seconds a batch instance takes to start: a slot's spare GPUs give their time less this. */
  startS: number;
}

/**
 * One site over a deferral grid as the edge knows it: slot 0 from the plan in force (and its
 * handover), later slots with the same interactive instances (the plan held) at each slot's
 * forecast intensity and power, costs at the batch operating point. A site whose power is not
 * firm gives firm capacity in slot 0 only, so the scheduler keeps every deadline without it.
 *
 * @example
 * const wind = deferralSite({ site, gpus: 8, gpu, profile, point, overhead: 1.82, plan, previous, carbonGPerKwh: [11, 11], availableW: [9000, 4000], firm: false, slotS: 900, startS: 60 });
 */
export function deferralSite(o: DeferralSiteOptions): DeferralSite {
  if (o.carbonGPerKwh.length !== o.availableW.length) throw new RangeError(`carbonGPerKwh has ${o.carbonGPerKwh.length} slots, availableW ${o.availableW.length}`);
  const usable = Math.max(0, o.slotS - o.startS) / o.slotS;
  const base = { gpus: o.gpus, gpu: o.gpu, profile: o.profile, batchTp: o.point.tp, overhead: o.overhead };
  const slots = o.availableW.map((availableW, t) => spareCapacity(o.plan, { ...base, availableW, ...(t === 0 ? { previous: o.previous } : {}) }));
  const spareGpus = slots.map((x) => x.spareGpus * usable);
  const spareW = slots.map((x) => x.spareW);
  const costs = Object.fromEntries(Object.entries(o.point.classes).map(([c, x]) => [c, x.cost])) as Record<string, BatchRequestCost>;
  const firm = o.firm === false ? { firmSpareGpus: spareGpus.map((x, t) => (t === 0 ? x : 0)), firmSpareW: spareW.map((x, t) => (t === 0 ? x : 0)) } : {};
  return { site: o.site, costs, carbonGPerKwh: [...o.carbonGPerKwh], spareGpus, spareW, ...firm };
}
