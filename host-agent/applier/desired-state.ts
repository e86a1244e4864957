import { clockBounds } from "../../src/core/model/clock-grid.ts";
import { knownPerfModel } from "../../src/core/model/model-identity.ts";
import type { MigSlice } from "../../src/core/schemas/mig.ts";
import type { ModelIdentity } from "../../src/core/schemas/model-identity.ts";
import type { ClockSetting, SitePlan } from "../../src/core/schemas/plan.ts";
import type { EngineDriver, EngineLaunch } from "../engines/engine.ts";
import type { ClockLock } from "../gpu-state/tracked-gpu-backend.ts";
import type { SitePlanSlice } from "../protocol/plan-slice.ts";

/** Where a plan came from: pulled from the edge, posted to the local control API, or kept in the state dir by an earlier run (applied while the edge cannot be reached). */
export type PlanSource = "edge" | "local" | "stored";

/** What this site should run: engines, a clock lock (or none) per GPU, and each instance's clock setting. */
export interface DesiredState {
  slice: SitePlanSlice;
  source: PlanSource;
  launches: EngineLaunch[];
  /** Index = GPU; null means back to the driver's default clocks. */
  clocks: (ClockLock | null)[];
  clockOf: ReadonlyMap<string, ClockSetting>;
  /** Per GPU carved into MIG slices, its slices in slot order; a GPU not listed runs whole. */
  mig: ReadonlyMap<number, readonly MigSlice[]>;
}

/**
 * One launch per replica: replica r of an instance runs on GPUs [r*tp, (r+1)*tp) of its list; on
 * MIG, on the next slot of its GPU (slots numbered in plan order, instance by instance). It serves
 * and loads its model as the slice's `models` say (by its API id where they say nothing; the
 * performance-model key then is the id if the model knows it).
 */
export function launchesOf(site: SitePlan | null, models: Readonly<Record<string, ModelIdentity>> = {}): EngineLaunch[] {
  if (!site) return [];
  const slots = new Map<number, number>();
  return site.instances.flatMap((inst) =>
    Array.from({ length: inst.replicas }, (_, replica) => {
      const gpus = inst.gpus.slice(replica * inst.tp, (replica + 1) * inst.tp);
      const slot = inst.mig ? (slots.get(gpus[0]!) ?? 0) : 0;
      if (inst.mig) slots.set(gpus[0]!, slot + 1);
      return { instanceId: inst.id, replica, model: inst.model, ...identityOf(inst.model, models), variant: inst.variant, tp: inst.tp, gpus, role: inst.role, ...(inst.mig ? { mig: { profile: inst.mig, slot } } : {}) };
    }),
  );
}

/**
 * Problems that make a (schema-valid) slice unusable on this host: another site's plan, GPU indices
 * the host does not have, launches the engine driver cannot run. Empty when it can be applied.
 */
export function checkSlice(slice: SitePlanSlice, host: { site: string; gpuCount: number; driver: EngineDriver }): string[] {
  const problems: string[] = [];
  if (slice.site && slice.site.site !== host.site) problems.push(`the plan slice is for site "${slice.site.site}", this agent runs site "${host.site}"`);
  for (const inst of slice.site?.instances ?? []) {
    const missing = inst.gpus.filter((g) => g >= host.gpuCount);
    if (missing.length > 0) problems.push(`instance ${inst.id} uses GPU ${missing.join(", ")} but this host has ${host.gpuCount} GPU(s)`);
  }
  for (const launch of launchesOf(slice.site, slice.models)) {
    if (launch.replica > 0) continue;
    const why = host.driver.check(launch);
    if (why) problems.push(why);
  }
  return problems;
}

/** The desired state of a slice that passed `checkSlice`. */
export function desiredState(slice: SitePlanSlice, source: PlanSource, gpuCount: number): DesiredState {
  const clocks: (ClockLock | null)[] = Array.from({ length: gpuCount }, () => null);
  const clockOf = new Map<string, ClockSetting>();
  for (const inst of slice.site?.instances ?? []) {
    clockOf.set(inst.id, inst.clock);
    for (const g of inst.gpus) clocks[g] = clockBounds(inst.clock);
  }
  const launches = launchesOf(slice.site, slice.models);
  const mig = new Map<number, MigSlice[]>();
  for (const l of launches) if (l.mig) (mig.get(l.gpus[0]!) ?? mig.set(l.gpus[0]!, []).get(l.gpus[0]!)!)[l.mig.slot] = l.mig.profile;
  return { slice, source, launches, clocks, clockOf, mig };
}

function identityOf(model: string, models: Readonly<Record<string, ModelIdentity>>): Pick<EngineLaunch, "servedName" | "weights" | "perfModel"> {
  const identity = models[model];
  if (identity) return identity;
  return knownPerfModel(model) ? { perfModel: model } : {};
}
