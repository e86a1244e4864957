import type { DeferrableWork, DeferralInput, DeferralSite } from "../schemas/deferral.ts";
import type { ClassId, SiteId } from "../schemas/ids.ts";
import type { DeferralWorld } from "./deferral-world.ts";

export const SLOT_MS = 900_000;
export const T0 = Date.UTC(2022, 1, 27, 4);
/** One request: 90 GPU-seconds and 36 kJ (0.01 kWh) above idle; a GPU runs 10 per 15-min slot. */
export const COST = { gpuSeconds: 90, energyJ: 36_000 };

/** A site over slots: intensity per slot, and the same spare GPUs/power in every slot unless given per slot. */
export function site(id: string, carbon: number[], spareGpus: number | number[] = 1, spareW: number | number[] = 1e6): DeferralSite {
  const per = (x: number | number[]) => (Array.isArray(x) ? x : carbon.map(() => x));
  return { site: id as SiteId, carbonGPerKwh: carbon, spareGpus: per(spareGpus), spareW: per(spareW), costs: { ["MM" as ClassId]: COST } };
}

/** Work of class MM submitted at slot `from` (its start), due at the end of slot `due`. */
export function work(id: string, requests: number, from: number, due: number): DeferrableWork {
  return { id, classId: "MM" as ClassId, requests, submittedAtMs: T0 + from * SLOT_MS, deadlineMs: T0 + (due + 1) * SLOT_MS };
}

export function input(sites: DeferralSite[], backlog: DeferrableWork[]): DeferralInput {
  return { startMs: T0, slotMs: SLOT_MS, sites, backlog };
}

/** A world whose forecasts are perfect: every slot's sites as `truth` says. */
export function perfectWorld(truth: DeferralSite[], work: DeferrableWork[]): DeferralWorld {
  const slice = (from: number, length: number) => truth.map((s) => ({ ...s, carbonGPerKwh: s.carbonGPerKwh.slice(from, from + length), spareGpus: s.spareGpus.slice(from, from + length), spareW: s.spareW.slice(from, from + length) }));
  return { startMs: T0, slotMs: SLOT_MS, slots: truth[0]!.carbonGPerKwh.length, work, sitesAt: (k, n) => slice(k, n), actual: (k) => slice(k, 1) };
}
