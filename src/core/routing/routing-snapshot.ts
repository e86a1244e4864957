import type { Fleet } from "../schemas/fleet.ts";
import type { ClassId, InstanceId, ModelId, SiteId } from "../schemas/ids.ts";
import type { Plan } from "../schemas/plan.ts";
import type { ClassScheme } from "../schemas/request-class.ts";
import { formatSloHeader } from "../schemas/slo-header.ts";
import { siteCarbonIntensity, type SiteCarbon } from "./carbon.ts";
import type { SiteStatus } from "./site-status.ts";

/** A site as routing sees it. */
export interface SiteView {
  id: SiteId;
  ingressUrl: string;
  /** RTT in ms from edge regions (colo or continent codes) to the site. */
  rttMs: Record<string, number>;
  carbon: SiteCarbon;
  /** Null before the site's first heartbeat. */
  status: SiteStatus | null;
}

/** A class's bins and the TTFT objective that bounds how far away its requests may go. */
export interface ClassView {
  inputBin: number;
  outputBin: number;
  ttftMs: number;
  /** The class's SLO as the edge sends it to the site with each request (`SLO_HEADER`). */
  sloHeader: string;
}

/** One routing target of a class, with the model its instance serves. */
export interface SnapshotTarget {
  site: SiteId;
  instance: InstanceId;
  model: ModelId;
  weight: number;
}

/**
 * Everything the edge needs to classify and route without a Durable Object round trip: the
 * scheme, the plan's weights and each site's health. It is plain data (it crosses RPC and is
 * cached per isolate). `generation` changes with any input; `planKey` only with the fleet, the
 * plan or its Planner-S correction, so round-robin state survives health updates.
 */
export interface RoutingSnapshot {
  generation: number;
  planKey: string;
  planVersion: number | null;
  /** The Planner-S correction of the version in force (0: as planned). */
  planRevision: number;
  scheme: ClassScheme;
  classes: Record<ClassId, ClassView>;
  models: ModelId[];
  sites: Record<SiteId, SiteView>;
  targets: Record<ClassId, SnapshotTarget[]>;
  /** The plan's standby instances (weight 1 each): any class of their model fails over to them. */
  standby: SnapshotTarget[];
}

export interface SnapshotInput {
  generation: number;
  /** Bumped whenever the fleet is replaced. */
  fleetRevision: number;
  fleet: Fleet;
  plan: Plan | null;
  statuses: ReadonlyMap<string, SiteStatus>;
  /** Latest reported carbon intensity per site, gCO2e/kWh. */
  carbon: ReadonlyMap<string, number>;
}

/**
 * Builds the routing snapshot. Targets and standbys at sites or of models no longer in the fleet
 * are dropped (the fleet may change under a plan).
 *
 * @example
 * const snapshot = buildRoutingSnapshot({ generation: 1, fleetRevision: 1, fleet, plan, statuses, carbon });
 */
export function buildRoutingSnapshot(input: SnapshotInput): RoutingSnapshot {
  const { fleet, plan } = input;
  const sites = {} as Record<SiteId, SiteView>;
  for (const s of fleet.sites) {
    sites[s.id] = { id: s.id, ingressUrl: s.ingressUrl, rttMs: s.rttMs, carbon: siteCarbonIntensity(s, input.carbon.get(s.id)), status: input.statuses.get(s.id) ?? null };
  }
  const classes = {} as Record<ClassId, ClassView>;
  for (const c of fleet.classes) classes[c.id] = { inputBin: c.inputBin, outputBin: c.outputBin, ttftMs: c.slo.ttftMs, sloHeader: formatSloHeader(c.slo) };
  const models = fleet.models.map((m) => m.id);
  const modelSet = new Set<string>(models);
  const modelOf = new Map<string, ModelId>();
  for (const sp of plan?.sites ?? []) for (const i of sp.instances) modelOf.set(`${sp.site}/${i.id}`, i.model);
  const targets = {} as Record<ClassId, SnapshotTarget[]>;
  for (const [classId, list] of Object.entries(plan?.routing ?? {}) as [ClassId, Plan["routing"][ClassId]][]) {
    if (!classes[classId]) continue;
    targets[classId] = [];
    for (const t of list ?? []) {
      const model = modelOf.get(`${t.site}/${t.instance}`);
      if (model !== undefined && sites[t.site] && modelSet.has(model)) targets[classId].push({ site: t.site, instance: t.instance, model, weight: t.weight });
    }
  }
  const standby = (plan?.standby ?? []).filter((s) => sites[s.site] && modelSet.has(s.model)).map((s) => ({ site: s.site, instance: s.instance, model: s.model, weight: 1 }));
  return {
    generation: input.generation,
    planKey: `${input.fleetRevision}:${plan?.version ?? "none"}.${plan?.revision ?? 0}`,
    planVersion: plan?.version ?? null,
    planRevision: plan?.revision ?? 0,
    scheme: fleet.classScheme,
    classes,
    models,
    sites,
    targets,
    standby,
  };
}
