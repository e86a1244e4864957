import { gpuSpec } from "../model/gpu-specs.ts";
import { SERVER_POWER_OVERHEAD } from "../model/power.ts";
import { rowsOf } from "../profiling/profile-lookup.ts";
import type { GpuType, InstanceId, ModelId, SiteId } from "../schemas/ids.ts";
import type { ClockSetting, Plan, PlannedInstance, SitePlan, StandbyInstance } from "../schemas/plan.ts";
import { sitePowerAtCeilingW } from "./plan-power.ts";
import type { PlanningInput, PlanningSite } from "./planning-input.ts";
import { gpuRanges, type GpuRange } from "./site-gpus.ts";

/** A place a standby of a model could go: a site, its instance there, and what idling costs. */
interface Candidate {
  site: PlanningSite;
  instance: PlannedInstance;
  report: StandbyInstance;
}

/**
 * Keeps failover capacity in a plan: every model the plan serves at one site only gets a standby
 * instance at a second site, so that routing has somewhere to send its requests the moment that
 * site stops answering, without a heartbeat timeout or a replan. The standby is the smallest TP
 * the profile has for the model's variant on the site's GPUs, on free GPUs, at a clock of the
 * policy's kind (locked at the profile's highest clock, or the same clock policy over the
 * profile's clock range); it has no planned load. It goes where the plan in force kept it, if it
 * still fits, else to the site where idling costs the least carbon (then the nearest, then by id),
 * among sites that can power the standby at its ceiling clock beside what they already run. Each
 * standby is reported with its idle power and carbon (`Plan.standby`); a model no second site can
 * take gets a note instead.
 *
 * @example
 * const plan = withStandby(planner.plan(input, solver).plan, input);
 * plan.standby; // [{ model: "llama3.1-8b", site: "grid-ciso", instance: "standby-0", idlePowerW: 136.5, gco2ePerHour: 31.4 }]
 */
export function withStandby(plan: Plan, input: PlanningInput): Plan {
  const models = [...new Set(plan.sites.flatMap((s) => s.instances.map((i) => i.model)))];
  let sites = input.sites.map((s): SitePlan => plan.sites.find((p) => p.site === s.id) ?? { site: s.id, powerCapW: Math.max(1, s.powerW), instances: [] });
  const standby: StandbyInstance[] = [];
  const notes: string[] = [];
  models.forEach((model, k) => {
    const serving = sites.filter((s) => s.instances.some((i) => i.model === model));
    if (serving.length !== 1) return;
    const primary = serving[0]!.instances.find((i) => i.model === model)!;
    const id = `standby-${k}` as InstanceId;
    const kept = input.previous?.standby?.find((s) => s.model === model)?.site;
    const candidates = input.sites
      .filter((s) => s.id !== serving[0]!.site)
      .map((s) => candidateAt(s, sites.find((p) => p.site === s.id)!, primary, id, input))
      .filter((c): c is Candidate => c !== undefined)
      .sort((a, b) => Number(b.site.id === kept) - Number(a.site.id === kept) || costOrder(a) - costOrder(b) || (a.site.rttMs ?? Infinity) - (b.site.rttMs ?? Infinity) || a.site.id.localeCompare(b.site.id));
    const chosen = candidates[0];
    if (!chosen) return void notes.push(`standby: no second site has free GPUs, a profile and the power for a standby of ${model} (it runs at ${serving[0]!.site} only)`);
    sites = sites.map((s) => (s.site === chosen.site.id ? { ...s, instances: [...s.instances, chosen.instance] } : s));
    standby.push(chosen.report);
    notes.push(`standby: ${model} at ${chosen.site.id} (${chosen.instance.id}, TP${chosen.instance.tp}), ${chosen.report.idlePowerW.toFixed(0)} W idle${chosen.report.gco2ePerHour === null ? "" : `, ${chosen.report.gco2ePerHour.toFixed(1)} gCO2e/h`}`);
  });
  if (standby.length === 0 && notes.length === 0) return plan;
  return { ...plan, sites: sites.filter((s) => s.instances.length > 0 || plan.sites.some((p) => p.site === s.site)), ...(standby.length > 0 ? { standby } : {}), notes: [...plan.notes, ...notes] };
}

const costOrder = (c: Candidate) => c.report.gco2ePerHour ?? Infinity;

/** The standby a site could hold for `primary`'s model, or undefined when it has no free GPUs, no profile or no power for one. */
function candidateAt(site: PlanningSite, plan: SitePlan, primary: PlannedInstance, id: InstanceId, input: PlanningInput): Candidate | undefined {
  const ranges = gpuRanges(site.gpus);
  const used = usedGpus(plan);
  for (const range of ranges) {
    const rows = rowsOf(input.profile, { model: primary.model, variant: primary.variant, gpu: range.type });
    const tp = Math.min(...rows.map((r) => r.tp));
    if (!Number.isFinite(tp)) continue;
    const previous = input.previous?.sites.find((s) => s.site === site.id)?.instances.find((i) => i.id === id && i.tp === tp)?.gpus;
    const gpus = (previous && fits(previous, range, used) ? previous : undefined) ?? freeBlock(range, tp, used);
    if (!gpus) continue;
    const clocks = [...new Set(rows.filter((r) => r.tp === tp).map((r) => r.mhz))].sort((a, b) => a - b);
    const instance: PlannedInstance = { id, model: primary.model, variant: primary.variant, tp, replicas: 1, gpus, role: "mixed", clock: clockLike(primary.clock, clocks), loadRps: {} };
    const { watts, unpriced } = sitePowerAtCeilingW({ ...plan, instances: [...plan.instances, instance] }, site.gpus, input.profile);
    if (unpriced.length > 0 || watts > site.powerW) continue;
    return { site, instance, report: report(primary.model, site, id, tp, range.type) };
  }
  return undefined;
}

/** A clock of the primary's kind over the standby's profiled clocks: locked at the highest, or the same policy from the lowest to the highest. */
function clockLike(primary: ClockSetting, clocks: readonly number[]): ClockSetting {
  const top = clocks.at(-1)!;
  return primary.mode === "locked" ? { mode: "locked", mhz: top } : { mode: "policy", policy: primary.policy, minMhz: clocks[0]!, maxMhz: top };
}

function report(model: ModelId, site: PlanningSite, instance: InstanceId, tp: number, gpu: GpuType): StandbyInstance {
  const idlePowerW = tp * gpuSpec(gpu).power.idleW * SERVER_POWER_OVERHEAD;
  return { model, site: site.id as SiteId, instance, idlePowerW, gco2ePerHour: site.carbonGPerKwh === undefined ? null : (idlePowerW * site.carbonGPerKwh) / 1000 };
}

/** GPUs a site's plan gives out, whole or as MIG slices. */
function usedGpus(plan: SitePlan): Set<number> {
  return new Set(plan.instances.flatMap((i) => i.gpus));
}

const fits = (gpus: readonly number[], range: GpuRange, used: ReadonlySet<number>) => gpus.every((g) => g >= range.start && g < range.start + range.count && !used.has(g));

/** The lowest free block of `tp` GPUs of the range, aligned to `tp`. */
function freeBlock(range: GpuRange, tp: number, used: ReadonlySet<number>): number[] | undefined {
  for (let b = range.start; b + tp <= range.start + range.count; b += tp) {
    const block = Array.from({ length: tp }, (_, j) => b + j);
    if (fits(block, range, used)) return block;
  }
  return undefined;
}
