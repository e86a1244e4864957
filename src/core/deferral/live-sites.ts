import { gpuSpec } from "../model/gpu-specs.ts";
import { SERVER_POWER_OVERHEAD } from "../model/power.ts";
import { siteConditions } from "../planning/fleet-input.ts";
import { siteCarbonIntensity } from "../routing/carbon.ts";
import type { SiteStatus } from "../routing/site-status.ts";
import type { BatchRequestCost, DeferralSite } from "../schemas/deferral.ts";
import type { Fleet, Site } from "../schemas/fleet.ts";
import type { Forecast } from "../schemas/forecast.ts";
import type { ClassId } from "../schemas/ids.ts";
import type { Plan } from "../schemas/plan.ts";
import type { ProfileRow } from "../schemas/profile.ts";
import { instanceHeadroom } from "./instance-headroom.ts";

/** What the edge holds about its sites (ControlDO's fleet, plan, forecasts, profile table and routing statuses). */
export interface LiveDeferralSources {
  fleet: Fleet;
  plan: Plan | null;
  forecasts: readonly Forecast[];
  profile: readonly ProfileRow[];
  /** Routing status per site id (absent or null: never heard from). */
  statuses: Readonly<Record<string, SiteStatus | null | undefined>>;
  /** Latest reported intensity per site (gCO2/kWh), for a grid site without a carbon forecast. */
  reportedCarbon: Readonly<Record<string, number>>;
  nowMs: number;
  /** A site not heard from for this long has no capacity now. */
  staleAfterMs: number;
}

/** A deferral grid: `slots` slots of `slotMs` from `startMs` (slot 0 is the one under way). */
export interface DeferralGrid {
  startMs: number;
  slotMs: number;
  slots: number;
}

/**
 * The fleet's sites over a deferral grid as the live edge can use them: work that can wait runs
 * in the headroom of the interactive plan's instances (`instanceHeadroom`: the edge routes it
 * spare-only; no batch instances are started on free GPUs), so a site offers, in every slot, the
 * GPU time its plan entries' planned load leaves and the power its envelope leaves above what they
 * draw at that load (free GPUs at idle). Each slot reads the forecasts as the planners do
 * (`siteConditions`: the least power forecast over the slot, the mean carbon forecast; a wind site
 * at its life-cycle intensity), later slots holding the plan in force. Slot 0 leaves out a site
 * that is down or stale and instances that are saturated, starting or unavailable; a wind farm's
 * capacity after slot 0 is not firm. A class costs at a site what it costs on the entries routed
 * for it there (GPU-weighted).
 *
 * @example
 * const { sites } = liveDeferralSites(sources, { startMs: slotStart, slotMs: 900_000, slots: 96 });
 * releaseNow({ startMs: slotStart, slotMs: 900_000, sites, backlog }, solver);
 */
export function liveDeferralSites(src: LiveDeferralSources, grid: DeferralGrid): { sites: DeferralSite[]; notes: string[] } {
  const notes: string[] = [];
  const conditions = Array.from({ length: grid.slots }, (_, t) => siteConditions(src.fleet, src.forecasts, grid.startMs + t * grid.slotMs, grid.startMs + (t + 1) * grid.slotMs, t === 0 ? notes : []));
  const sites = src.fleet.sites.map((site, s) => {
    const capacity = siteHeadroom(site, src, notes);
    const carbonGPerKwh = conditions.map((c) => c[s]!.carbonGPerKwh ?? siteCarbonIntensity(site, src.reportedCarbon[site.id]).gPerKwh);
    const spareW = (t: number) => Math.max(0, conditions[t]![s]!.powerW - capacity.drawW);
    const spareGpus = Array.from({ length: grid.slots }, (_, t) => (t === 0 ? capacity.gpusNow : capacity.gpus));
    const spare = { spareGpus, spareW: spareGpus.map((_, t) => spareW(t)) };
    const firm = site.power.kind === "wind" || !capacity.up ? { firmSpareGpus: spare.spareGpus.map((x, t) => (t === 0 ? x : 0)), firmSpareW: spare.spareW.map((x, t) => (t === 0 ? x : 0)) } : {};
    return { site: site.id, costs: capacity.costs, carbonGPerKwh, ...spare, ...firm } satisfies DeferralSite;
  });
  return { sites, notes };
}

/** A site's headroom in GPUs (all its entries, and those that can take work now), its draw at the planned load, and its costs per class. */
function siteHeadroom(site: Site, src: LiveDeferralSources, notes: string[]): { gpus: number; gpusNow: number; drawW: number; costs: Record<string, BatchRequestCost>; up: boolean } {
  const type = [...site.gpus].sort((a, b) => b.count - a.count)[0]!.type;
  const gpu = gpuSpec(type);
  const total = site.gpus.reduce((n, g) => n + g.count, 0);
  const status = src.statuses[site.id];
  const up = !!status?.healthy && status.lastSeenMs !== null && src.nowMs - status.lastSeenMs <= src.staleAfterMs;
  if (!up) notes.push(`site ${site.id}: down or not heard from, no capacity now`);
  const entries = src.plan?.sites.find((p) => p.site === site.id)?.instances ?? [];
  const busyNow = new Set<string>([...(status?.saturated ?? []), ...(status?.unavailable ?? []), ...(status?.starting ?? [])]);
  const weighted = new Map<ClassId, { gpus: number; gpuSeconds: number; energyJ: number }>();
  let gpus = 0;
  let gpusNow = 0;
  let held = 0;
  let drawW = 0;
  for (const inst of entries) {
    const h = instanceHeadroom(inst, src.profile, { gpu, overhead: SERVER_POWER_OVERHEAD });
    held += h.gpus;
    drawW += h.plannedDrawW;
    const routed = Object.entries(src.plan?.routing ?? {}).filter(([, targets]) => targets.some((t) => t.site === site.id && t.instance === inst.id && t.weight > 0)).map(([c]) => c as ClassId);
    const priced = routed.filter((c) => h.costs[c] !== undefined);
    if (priced.length === 0) continue;
    const free = h.gpus * (1 - h.busyShare);
    gpus += free;
    if (up && !busyNow.has(inst.id)) gpusNow += free;
    for (const c of priced) {
      const w = weighted.get(c) ?? { gpus: 0, gpuSeconds: 0, energyJ: 0 };
      w.gpus += h.gpus;
      w.gpuSeconds += h.gpus * h.costs[c]!.gpuSeconds;
      w.energyJ += h.gpus * h.costs[c]!.energyJ;
      weighted.set(c, w);
    }
  }
  if (weighted.size === 0) notes.push(`site ${site.id}: no planned instance with a profiled point takes work that can wait`);
  drawW += Math.max(0, total - held) * gpu.power.idleW * SERVER_POWER_OVERHEAD;
  const costs = Object.fromEntries([...weighted].map(([c, w]) => [c, { gpuSeconds: w.gpuSeconds / w.gpus, energyJ: w.energyJ / w.gpus }]));
  return { gpus, gpusNow, drawW, costs, up };
}
