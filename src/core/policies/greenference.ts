import { CLOVER_CARBON_TRIGGER } from "../planning/clover/controller.ts";
import { greenferenceCost } from "../planning/greenference/greenference-cost.ts";
import { GREENFERENCE_DEFAULT_WEIGHTS, greenferencePlanner, GreenferenceConfig, WORLD_AVERAGE_G_PER_KWH } from "../planning/greenference/greenference-planner.ts";
import { heronPlannerS, type PlannerSInput } from "../planning/heron/planner-s.ts";
import { PLANNER_L_PERIOD_MS } from "../planning/planning-input.ts";
import type { ClockSetting, Plan, PlanDelta } from "../schemas/plan.ts";
import type { CorrectorSpec, PolicyEntry } from "./policy-entry.ts";

/**
 * The combined policy's Planner-S: Heron's Planner-S over the plan with every EcoFreq instance read
 * as locked at its ceiling (the clock its power was budgeted at), priced as the planner prices
 * (carbon at each site's intensity, energy, latency); a retuned ceiling becomes the instance's new
 * EcoFreq upper bound, so the site keeps choosing per iteration below it.
 */
export const greenferenceCorrector: CorrectorSpec = {
  name: "greenference planner-s (EcoFreq ceilings, weights)",
  correct(input, solver, policy) {
    const atCeiling = ceilingsLocked(input.plan);
    const intensity = (site: number) => input.sites[site]?.carbonGPerKwh ?? WORLD_AVERAGE_G_PER_KWH;
    const s = heronPlannerS({ ...input, plan: atCeiling } satisfies PlannerSInput, solver, "min-energy", (site, o) => greenferenceCost(o, { carbonGPerKwh: intensity(site), qualityLoss: 0 }, policy.weights));
    const planned = new Map(input.plan.sites.flatMap((site) => site.instances.map((i) => [`${site.site}/${i.id}`, i.clock] as const)));
    const clocks: PlanDelta["clocks"] = s.delta.clocks.map((c) => ({ ...c, clock: asCeiling(planned.get(`${c.site}/${c.instance}`), c.clock) }));
    const short = Object.entries(s.shortfall).map(([c, rps]) => `${c} ${rps.toFixed(2)} req/s`);
    return { delta: { ...s.delta, clocks }, notes: [`planner-s: ${clocks.length} EcoFreq ceilings moved over ${s.stats.movable} entries${short.length ? `, short ${short.join(", ")}` : ""}`] };
  },
};

/** The plan with each policy clock locked at its upper bound. */
function ceilingsLocked(plan: Plan): Plan {
  return { ...plan, sites: plan.sites.map((s) => ({ ...s, instances: s.instances.map((i) => (i.clock.mode === "policy" ? { ...i, clock: { mode: "locked" as const, mhz: i.clock.maxMhz } } : i)) })) };
}

/** A clock Planner-S chose, as the setting the instance had: a policy keeps its policy with the new ceiling. */
function asCeiling(planned: ClockSetting | undefined, chosen: ClockSetting): ClockSetting {
  if (planned?.mode !== "policy" || chosen.mode !== "locked") return chosen;
  return { ...planned, minMhz: Math.min(planned.minMhz, chosen.mhz), maxMhz: chosen.mhz };
}

/**
 * Greenference's combined policy (DESIGN section 7): one plan over instances x TP x clock x model
 * variant x load per site, priced by the fleet's weights (carbon at each site's intensity, energy,
 * latency with the site's round trip, accuracy), EcoFreq bounds per instance, its own Planner-S,
 * Clover's carbon trigger, least-laxity-first queues, EcoRoute packing decode within tiles, and
 * join-idle gateways (a request whose instance has a queue at every replica joins an idle one).
 */
export const greenferencePolicy: PolicyEntry = {
  kind: "greenference",
  summary: "one plan over instances x TP x clock x variant x load, network RTT counted; its own Planner-S; EcoFreq bounds; carbon trigger; LLF queues; EcoRoute packing; join-idle gateways",
  fleetPlanner: { name: "greenference", cadenceMs: PLANNER_L_PERIOD_MS, create: (policy) => greenferencePlanner(GreenferenceConfig.parse({ kind: "greenference", weights: policy.weights })) },
  corrector: greenferenceCorrector,
  clockPolicy: "ecofreq",
  carbonTrigger: { threshold: CLOVER_CARBON_TRIGGER },
  site: { queue: "llf", decodeRouting: "pack", balance: "join-idle" },
  usesMig: false,
  usesVariants: true,
  defaultWeights: GREENFERENCE_DEFAULT_WEIGHTS,
};
