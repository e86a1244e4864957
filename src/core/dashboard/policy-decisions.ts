import { z } from "zod";
import type { PolicyEntry } from "../policies/policy-entry.ts";
import { PolicyKind, type Fleet } from "../schemas/fleet.ts";
import { EpochMs, SiteId } from "../schemas/ids.ts";
import { GatewayBalance, DecodeRouting, QueueDiscipline, type Plan } from "../schemas/plan.ts";
import { EmergencyStanding, PrefillHandoffCounts, type Telemetry } from "../schemas/telemetry.ts";

/** One Planner-S correction as the dashboard lists it. */
export const DashboardCorrection = z.object({
  atMs: EpochMs,
  planVersion: z.number().int().nonnegative(),
  revision: z.number().int().positive(),
  reason: z.string(),
  clocks: z.number().int().nonnegative(),
  classes: z.number().int().nonnegative(),
});
export type DashboardCorrection = z.infer<typeof DashboardCorrection>;

/** What the plan in force decided at one site: the levers it pulled there. */
export const DashboardSiteDecision = z.object({
  site: SiteId,
  /** "<variant> x<replicas>" per variant served. */
  variants: z.array(z.string()),
  /** "<profile> x<slices>" per MIG profile carved; empty for whole GPUs. */
  migSlices: z.array(z.string()),
  /** "<role> x<replicas>" per role. */
  roles: z.array(z.string()),
  /** "locked" or the clock policy, with the clock range its instances may use. */
  clocks: z.array(z.string()),
  queue: QueueDiscipline,
  decodeRouting: DecodeRouting,
  balance: GatewayBalance,
  /** Jain's fairness the site reported (FREESH Eq. 9); null when it reported none. */
  fairness: z.number().min(0).max(1).nullable(),
  /** The prefill/decode handoffs the site's gateway reported; null when it reported none or the plan gives it no decode instance. */
  prefillHandoffs: PrefillHandoffCounts.nullable(),
  /** Where DynamoLLM's emergency ladder stands at the site (empty: nowhere); null when it reported none or the plan runs no instance manager there. */
  emergencies: z.array(EmergencyStanding).nullable(),
});
export type DashboardSiteDecision = z.infer<typeof DashboardSiteDecision>;

/** What the fleet's policy does and what the plan in force decided, site by site. */
export const DashboardDecisions = z.object({
  policy: PolicyKind,
  summary: z.string(),
  fleetPlanner: z.string(),
  cadenceMinutes: z.number().positive(),
  corrector: z.string().nullable(),
  clockPolicy: z.string(),
  carbonTrigger: z.number().nullable(),
  /** The Planner-S correction of the plan in force (0: as planned). */
  revision: z.number().int().nonnegative(),
  sites: z.array(DashboardSiteDecision),
  corrections: z.array(DashboardCorrection),
});
export type DashboardDecisions = z.infer<typeof DashboardDecisions>;

/** Corrections shown. */
const CORRECTIONS_SHOWN = 10;

/**
 * The dashboard's "what the policy decides" table: the registry entry's levers, and per site the
 * variants, MIG slices, roles and clock settings of the plan in force, its queue and decode
 * routing, and the fairness, prefill/decode handoffs and emergency ladder the site reports; the
 * latest Planner-S corrections.
 *
 * @example
 * policyDecisions(POLICIES[fleet.policy.kind], fleet, plan, telemetryBySite, corrections);
 */
export function policyDecisions(entry: PolicyEntry, fleet: Fleet, plan: Plan | null, telemetry: ReadonlyMap<string, Telemetry | null>, corrections: readonly DashboardCorrection[]): DashboardDecisions {
  const counted = (pairs: [string, number][]) => {
    const by = new Map<string, number>();
    for (const [k, n] of pairs) by.set(k, (by.get(k) ?? 0) + n);
    return [...by].sort((a, b) => (a[0] < b[0] ? -1 : 1)).map(([k, n]) => `${k} x${n}`);
  };
  const sites = fleet.sites.map((site) => {
    const planned = plan?.sites.find((s) => s.site === site.id);
    const instances = planned?.instances ?? [];
    const beat = telemetry.get(site.id);
    return {
      site: site.id,
      variants: counted(instances.map((i) => [i.variant, i.replicas])),
      migSlices: counted(instances.flatMap((i) => (i.mig ? [[i.mig, i.replicas] as [string, number]] : []))),
      roles: counted(instances.map((i) => [i.role, i.replicas])),
      clocks: [...new Set(instances.map((i) => (i.clock.mode === "locked" ? `locked ${i.clock.mhz}` : `${i.clock.policy} ${i.clock.minMhz}-${i.clock.maxMhz}`)))].sort(),
      queue: planned?.queue ?? "fifo-rr",
      decodeRouting: planned?.decodeRouting ?? "spread",
      balance: planned?.balance ?? "as-routed",
      fairness: beat?.fairness ?? null,
      prefillHandoffs: instances.some((i) => i.role === "decode") ? (beat?.prefillHandoffs ?? null) : null,
      emergencies: instances.some((i) => i.clock.mode === "policy" && i.clock.policy === "instance-manager") ? (beat?.emergencies ?? null) : null,
    };
  });
  return {
    policy: entry.kind,
    summary: entry.summary,
    fleetPlanner: entry.fleetPlanner.name,
    cadenceMinutes: entry.fleetPlanner.cadenceMs / 60_000,
    corrector: entry.corrector?.name ?? null,
    clockPolicy: entry.clockPolicy,
    carbonTrigger: entry.carbonTrigger?.threshold ?? null,
    revision: plan?.revision ?? 0,
    sites,
    corrections: corrections.slice(0, CORRECTIONS_SHOWN).map(({ atMs, planVersion, revision, reason, clocks, classes }) => ({ atMs, planVersion, revision, reason, clocks, classes })),
  };
}
