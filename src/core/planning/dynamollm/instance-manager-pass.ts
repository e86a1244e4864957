import type { ClassId, GpuType, InstanceId, SiteId } from "../../schemas/ids.ts";
import type { Plan, PlanDelta, PlannedInstance } from "../../schemas/plan.ts";
import type { ProfileRow } from "../../schemas/profile.ts";
import type { Slo } from "../../schemas/request-class.ts";
import type { FleetCorrector } from "../../sim/fleet/fleet-types.ts";
import { mainClass } from "../plan-reading.ts";
import { INSTANCE_EPOCH_S, instanceManagerMixClock } from "./instance-manager.ts";
import type { MixPart } from "./mixed-load.ts";
import { parseEntryId } from "./pool-entry.ts";

export interface InstanceManagerPassOptions {
  profile: readonly ProfileRow[];
  model: string;
  variant?: string;
  slos: Readonly<Partial<Record<ClassId, Slo>>>;
  nowMs: number;
  /** The GPU type of an entry (from the site's GPU ranges). */
  gpuOf: (site: SiteId, entry: PlannedInstance) => GpuType | undefined;
  /** The entry's load now, req/s per class over all its replicas (from telemetry); default: what the plan expects. */
  loadOf?: (site: SiteId, entry: PlannedInstance) => Readonly<Record<string, number>>;
}

export interface InstanceManagerPass {
  delta: PlanDelta;
  /** Entries no clock serves within the SLO at their load: they run at the max clock and the emergency ladder is due. */
  emergencies: { site: SiteId; instance: InstanceId }[];
}

/**
 * One 5-second pass of DynamoLLM's instance managers over a plan: every entry whose clock policy
 * is "instance-manager" gets the lowest-energy clock at which every class it serves meets its own
 * SLO at its load per replica (`instanceManagerMixClock`, over the profiled clocks of its GPU and
 * TP): load spilled in from smaller classes is read on those classes' own curves at each clock,
 * and their SLOs bind as the pool's does. The decision goes out as
 * the same policy with both bounds at the chosen clock, so the entry stays under the instance
 * manager for the next pass.
 *
 * @example
 * const { delta } = instanceManagerPass(plan, { profile, model: "llama2-70b", slos, nowMs, gpuOf: () => "H100-80GB" });
 */
export function instanceManagerPass(plan: Plan, o: InstanceManagerPassOptions): InstanceManagerPass {
  const clocks: PlanDelta["clocks"] = [];
  const emergencies: InstanceManagerPass["emergencies"] = [];
  const variant = o.variant ?? "base";
  for (const site of plan.sites) {
    for (const entry of site.instances) {
      if (entry.clock.mode !== "policy" || entry.clock.policy !== "instance-manager") continue;
      const gpu = o.gpuOf(site.site, entry);
      const classId = (parseEntryId(entry.id)?.pool ?? mainClass(entry.loadRps)) as ClassId | undefined;
      if (!gpu || !classId || !o.slos[classId]) continue;
      const curve = (c: ClassId) => curvesOf(o.profile, o.model, variant).get(`${gpu}|${entry.tp}|${c}`) ?? [];
      const parts: MixPart[] = [];
      for (const [c, rps] of Object.entries(o.loadOf ? o.loadOf(site.site, entry) : entry.loadRps) as [ClassId, number][]) {
        const rows = curve(c);
        const slo = o.slos[c];
        if (rows.length > 0 && rps > 0) parts.push({ rows, loadRps: rps / entry.replicas, ...(slo ? { slo } : {}) });
      }
      // No load: the pool's own class at rest.
      if (parts.length === 0) parts.push({ rows: curve(classId), loadRps: 0, slo: o.slos[classId]! });
      if (parts[0]!.rows.length === 0) continue;
      const choice = instanceManagerMixClock(parts);
      if (!choice.meetsSlo) emergencies.push({ site: site.site, instance: entry.id });
      clocks.push({ site: site.site, instance: entry.id, clock: { mode: "policy", policy: "instance-manager", minMhz: choice.mhz, maxMhz: choice.mhz } });
    }
  }
  return { delta: { baseVersion: plan.version, createdAtMs: o.nowMs, clocks, routing: {} }, emergencies };
}

const curveCache = new WeakMap<readonly ProfileRow[], Map<string, Map<string, ProfileRow[]>>>();

/** A profile's rows of a model variant by (GPU, TP, class), built once per profile: a pass runs every 5 s. */
function curvesOf(profile: readonly ProfileRow[], model: string, variant: string): Map<string, ProfileRow[]> {
  const byModel = curveCache.get(profile) ?? curveCache.set(profile, new Map()).get(profile)!;
  let curves = byModel.get(`${model}|${variant}`);
  if (curves) return curves;
  byModel.set(`${model}|${variant}`, (curves = new Map()));
  for (const r of profile) {
    if (r.model !== model || r.variant !== variant) continue;
    const key = `${r.gpu}|${r.tp}|${r.classId}`;
    (curves.get(key) ?? curves.set(key, []).get(key)!).push(r);
  }
  return curves;
}

/**
 * The instance managers as the fleet simulator's corrector (every 5 s): each entry's load is what
 * the plan routes to it, scaled per class to the demand of the moment. While the plan version and
 * the demand stay as they were, the pass would decide the same and is skipped; a delta that would
 * only repeat the clocks in force is not sent.
 */
export function instanceManagerCorrector(o: { profile: readonly ProfileRow[]; model: string; variant?: string }): FleetCorrector {
  let last: { version: number; demand: string } | undefined;
  return {
    name: "dynamollm instance manager",
    cadenceS: INSTANCE_EPOCH_S,
    correct(ctx) {
      const demand = JSON.stringify(ctx.demandRps);
      if (last && last.version === ctx.current.version && last.demand === demand) return undefined;
      last = { version: ctx.current.version, demand };
      const planned = new Map<string, number>();
      for (const [c, targets] of Object.entries(ctx.current.routing)) planned.set(c, (targets ?? []).reduce((s, t) => s + t.weight, 0));
      const scale = (c: string) => (ctx.demandRps[c as ClassId] ?? 0) / Math.max(1e-12, planned.get(c) ?? 0);
      const { delta } = instanceManagerPass(ctx.current, {
        ...o,
        slos: ctx.slo,
        nowMs: Math.round(ctx.nowS * 1000),
        gpuOf: (site) => ctx.sites.find((s) => s.id === site)?.gpu.type,
        loadOf: (_site, entry) => Object.fromEntries(Object.entries(entry.loadRps).map(([c, rps]) => [c, rps * scale(c)])),
      });
      const inForce = new Map(ctx.current.sites.flatMap((s) => s.instances.map((e) => [`${s.site}/${e.id}`, JSON.stringify(e.clock)])));
      return delta.clocks.some((c) => inForce.get(`${c.site}/${c.instance}`) !== JSON.stringify(c.clock)) ? delta : undefined;
    },
  };
}
