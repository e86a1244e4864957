import type { KvHandoffProtocol } from "../../src/core/schemas/kv-transfer.ts";
import type { PlannedInstance } from "../../src/core/schemas/plan.ts";
import type { InstanceState } from "../../src/core/schemas/telemetry.ts";
import { launchKey, type Engine } from "../engines/engine.ts";
import type { SitePlanSlice } from "../protocol/plan-slice.ts";

/** What the gateway reads of the site: the running engines, the plan slice they came from, and the applier's state of each instance. */
export interface SiteView {
  site: string;
  engines(): Iterable<Engine>;
  slice(): SitePlanSlice | null;
  /** The state telemetry reports for the instance: "starting" while its engines are on their way, "failed" once the applier is no longer bringing it up. */
  instanceState(id: string): InstanceState;
}

/** What a request asks for: the plan instance the edge chose (if any), its model and class. */
export interface TargetQuery {
  instance?: string;
  model: string;
  classId?: string;
}

/** Where a request may go now: replicas that accept work, and how they were found. */
export interface Target {
  /** Round-robin group: the instance, or the pool of instances it was rerouted to. */
  group: string;
  replicas: Engine[];
  /** Why the request does not go to the instance it named; absent when it does. */
  rerouted?: string;
  /** True for a pool of role=decode instances: the replica is chosen by EcoRoute. */
  decode: boolean;
}

/**
 * The request cannot be served here; `status` 404 for a model the site does not serve, else 503.
 * `message` is a clause (lower case, no full stop), like the gateway's other messages, as one
 * refusal may be joined to another's ("instance x is not in site a's plan (plan 3), and ...").
 */
export interface Refusal {
  status: 404 | 503;
  code: "instance_not_found" | "model_not_found" | "no_replica";
  message: string;
}

/** An engine the gateway may send work to now. */
export const isAccepting = (e: Engine) => e.accepting && e.state === "ready" && e.url !== undefined;

/**
 * Resolves a request to the replicas that may serve it, as the plan and the engines stand now:
 * the named instance's accepting replicas; a role=decode instance's whole decode pool (same
 * model); while the named instance starts, the engines it replaces (`handoverReplicas`); failing
 * those, the accepting replicas of other (mixed) instances of the same model at the site that
 * serve the request's class (by the plan's routing, else its planned load). A request with no
 * instance named goes to any such instance (any instance of the model when none is planned for the
 * class), and so does one naming an instance the site does not run: the edge may already route by
 * a plan the site has not applied yet. When none of those has a replica up because they are still
 * starting, any accepting instance of the model stands in, the earlier plan's engines the applier
 * keeps until then (make-before-break) included. A drained instance has no stand-in, nor one whose
 * start failed (the applier's state, as telemetry reports it): the edge then sends the request to
 * another site, and the planner learns of the failure.
 *
 * @example
 * const target = resolveTarget(view, { instance: "llama-a", model: "llama3.1-8b", classId: "SM" });
 * if ("status" in target) reply(target.status, target.message);
 */
export function resolveTarget(view: SiteView, q: TargetQuery): Target | Refusal {
  const slice = view.slice();
  const planned = slice?.site?.instances ?? [];
  const engines = [...view.engines()];
  const replicasOf = (ids: ReadonlySet<string>) => engines.filter((e) => ids.has(e.launch.instanceId) && isAccepting(e)).sort(byKey);
  const version = slice ? `plan ${slice.version}` : "no plan yet";

  let named: PlannedInstance | undefined;
  if (q.instance !== undefined) {
    named = planned.find((i) => i.id === q.instance);
    const running = engines.filter((e) => e.launch.instanceId === q.instance);
    if (!named && running.length === 0) {
      // The edge routes by a plan this site has not applied yet (or no longer runs): another instance of the model may stand in.
      const standIn = resolveTarget(view, { model: q.model, classId: q.classId });
      if ("status" in standIn) return { status: 503, code: "instance_not_found", message: `instance ${q.instance} is not in site ${view.site}'s plan (${version}), and ${standIn.message}` };
      return { ...standIn, rerouted: `instance ${q.instance} is not in site ${view.site}'s plan (${version})` };
    }
    if (named?.role === "decode") {
      const pool = planned.filter((i) => i.role === "decode" && i.model === named!.model).map((i) => i.id);
      const replicas = replicasOf(new Set(pool));
      if (replicas.length > 0) return { group: `decode:${named.model}`, replicas, decode: true };
    } else {
      const own = replicasOf(new Set([q.instance]));
      if (own.length > 0) return { group: q.instance, replicas: own, decode: false };
      const handover = handoverReplicas(view, q.instance);
      if (handover.length > 0) return { group: `handover:${named!.model}`, replicas: handover, decode: false, rerouted: `instance ${q.instance} is starting: served by ${idsOf(handover)}, which ${version} replaces, until it is up` };
    }
  }

  const model = named?.model ?? q.model;
  const sameModel = planned.filter((i) => isOtherMixed(i, model, q.instance));
  if (q.instance === undefined && sameModel.length === 0) return { status: 404, code: "model_not_found", message: `the model \`${model}\` is not served at site ${view.site} (${version})` };
  const forClass = q.classId === undefined ? sameModel : sameModel.filter((i) => servesClass(slice!, view.site, i, q.classId!));
  // While a plan change is on its way, no instance may be planned for the class yet: any instance of the model then serves it.
  const serving = forClass.length > 0 || q.instance !== undefined ? forClass : sameModel;
  const replicas = replicasOf(new Set(serving.map((i) => i.id)));
  const why = q.instance === undefined ? undefined : `instance ${q.instance} has no replica accepting requests (${describe(engines.filter((e) => e.launch.instanceId === q.instance), view.instanceState(q.instance))})`;
  if (replicas.length > 0) return { group: `model:${model}:${q.classId ?? "*"}`, replicas, decode: false, ...(why ? { rerouted: why } : {}) };
  // Mid-change (the instances for the request are still starting), whatever runs the model stands
  // in: instances planned for other classes, and the engines of the plan before that the applier
  // keeps until the new ones are up (make-before-break).
  const awaited = [...(named ? [named] : []), ...serving];
  if (awaited.some((i) => view.instanceState(i.id) === "starting")) {
    const standIns = engines.filter((e) => e.launch.model === model && e.launch.role === "mixed" && isAccepting(e)).sort(byKey);
    if (standIns.length > 0) {
      const standIn = `served by ${idsOf(standIns)} while ${version}'s instances for it start`;
      return { group: `standin:${model}`, replicas: standIns, decode: false, rerouted: why ? `${why}; ${standIn}` : standIn };
    }
  }
  const ofClass = q.classId === undefined ? "" : ` serves class ${q.classId}`;
  const other = `${q.instance === undefined ? "no" : "no other"} instance of ${model} at site ${view.site}${ofClass} has a replica accepting requests`;
  return { status: 503, code: "no_replica", message: why ? `${why}, and ${other}` : other };
}

/**
 * The accepting replicas of the plan's other mixed instances of the request's model at the site:
 * those it routes the request's class to (`ofClass`; none without a class) and all of them
 * (`ofModel`), the join-idle balance's candidates in that order.
 */
export function planPeers(view: SiteView, q: TargetQuery): { ofClass: Engine[]; ofModel: Engine[] } {
  const slice = view.slice();
  const others = (slice?.site?.instances ?? []).filter((i) => isOtherMixed(i, q.model, q.instance));
  const replicasOf = (instances: readonly PlannedInstance[]) => {
    const ids = new Set<string>(instances.map((i) => i.id));
    return [...view.engines()].filter((e) => ids.has(e.launch.instanceId) && isAccepting(e)).sort(byKey);
  };
  const classId = q.classId;
  const ofClass = slice && classId !== undefined ? others.filter((i) => servesClass(slice, view.site, i, classId)) : [];
  return { ofClass: replicasOf(ofClass), ofModel: replicasOf(others) };
}

/**
 * The accepting replicas of the plan's prefill instances of `model` at the site that take part in
 * the KV handoff in `protocol` (for `bootstrap`, with their bootstrap server known): where a
 * request routed to a decode pool is prefilled.
 */
export function prefillReplicas(view: SiteView, model: string, protocol: KvHandoffProtocol): Engine[] {
  const ids = new Set<string>((view.slice()?.site?.instances ?? []).filter((i) => i.role === "prefill" && i.model === model).map((i) => i.id));
  const speaks = (e: Engine) => e.kvHandoff === protocol && (protocol !== "bootstrap" || e.kvBootstrap !== undefined);
  return [...view.engines()].filter((e) => ids.has(e.launch.instanceId) && speaks(e) && isAccepting(e)).sort(byKey);
}

/** A mixed instance of `model` other than `instance`: only mixed instances run a request whole. */
const isOtherMixed = (i: PlannedInstance, model: string, instance: string | undefined) => i.model === model && i.id !== instance && i.role === "mixed";

/**
 * The engines that stand in for a planned mixed instance while it starts: the accepting mixed
 * engines of its model that the plan no longer names, which the applier keeps until the plan's
 * instances are up (make-before-break). Empty when the instance is not starting or none is kept.
 * The site reports such an instance as covered, so the edge sends it its share as if it were up.
 */
export function handoverReplicas(view: SiteView, instanceId: string): Engine[] {
  const planned = view.slice()?.site?.instances ?? [];
  const inst = planned.find((i) => i.id === instanceId);
  if (!inst || inst.role !== "mixed" || view.instanceState(instanceId) !== "starting") return [];
  const named = new Set<string>(planned.map((i) => i.id));
  return [...view.engines()].filter((e) => !named.has(e.launch.instanceId) && e.launch.model === inst.model && e.launch.role === "mixed" && isAccepting(e)).sort(byKey);
}

const idsOf = (engines: readonly Engine[]) => [...new Set(engines.map((e) => e.launch.instanceId))].join(", ");

/** The plan routes `classId` to `inst` at this site, or plans load of that class on it. */
function servesClass(slice: SitePlanSlice, site: string, inst: PlannedInstance, classId: string): boolean {
  // Own properties only: a class id must never read a prototype member (`constructor`...).
  const targets = Object.hasOwn(slice.routing, classId) ? slice.routing[classId as keyof typeof slice.routing] : undefined;
  if (targets?.some((t) => t.site === site && t.instance === inst.id && t.weight > 0)) return true;
  return Object.hasOwn(inst.loadRps, classId) && (inst.loadRps[classId as keyof typeof inst.loadRps] ?? 0) > 0;
}


function describe(engines: readonly Engine[], state: InstanceState): string {
  if (engines.length === 0) return state === "failed" ? "none running: its start failed" : "none running";
  return engines.map((e) => `${launchKey(e.launch)} ${e.accepting || e.state !== "ready" ? e.state : e.unresponsive ? "not answering its health checks" : "not accepting"}`).join(", ");
}

const byKey = (a: Engine, b: Engine) => a.launch.instanceId.localeCompare(b.launch.instanceId) || a.launch.replica - b.launch.replica;
