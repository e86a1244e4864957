import { gpuSpecs } from "../model/gpu-specs.ts";
import { variantLlmSpec, weightBytes } from "../model/llm-specs.ts";
import { SERVER_POWER_OVERHEAD } from "../model/power.ts";
import { QWEN25_FAMILY } from "../planning/clover/variants.ts";
import { PLANNER_L_PERIOD_MS } from "../planning/planning-input.ts";
import { sitePowerAtCeilingW } from "../planning/plan-power.ts";
import { DYNAMOLLM_CLASS_LENGTHS } from "../profiling/class-lengths.ts";
import { defaultClocks, virtualProfile } from "../profiling/virtual-profiler.ts";
import { planAgainstFleet } from "../routing/plan-against-fleet.ts";
import { Fleet } from "../schemas/fleet.ts";
import type { Forecast } from "../schemas/forecast.ts";
import type { SiteId } from "../schemas/ids.ts";
import { Plan } from "../schemas/plan.ts";
import type { ProfileRow, ProfileTable } from "../schemas/profile.ts";
import type { PolicyEntry } from "./policy-entry.ts";

/** When the contract's plans are made. */
export const CONTRACT_NOW = Date.parse("2024-05-01T12:00:00Z");
/** GPUs per site in the contract's fleet: small enough that a real agent runs every instance. */
export const CONTRACT_GPUS = 8;
/** Share of its GPUs at TDP that the wind site's forecast powers. */
const WIND_SHARE = 0.75;
const DEMAND_RPS = 0.3;

/**
 * The example fleet (docs/fleets/example.json, parsed by the caller) as the policy contract runs
 * it: 8 GPUs per site with power to match, the policy's own kind and default weights, and a model a
 * real agent on simulated GPUs runs: Llama-3.1-8B, or for a policy that chooses variants Clover's
 * Qwen2.5 7B and 32B.
 */
export function contractFleet(example: unknown, entry: PolicyEntry): Fleet {
  const fleet = Fleet.parse(example);
  const family = entry.usesVariants ? QWEN25_FAMILY.filter((v) => ["7b", "32b"].includes(v.variant.id)).map((v) => v.variant) : [{ model: "llama3.1-8b", id: "base", quality: 1, memoryGb: weightBytes(variantLlmSpec("llama3.1-8b", "base")) / 1e9, parameterCount: 8e9 }];
  return Fleet.parse({
    ...fleet,
    sites: fleet.sites.map((s) => ({
      ...s,
      gpus: s.gpus.map((g) => ({ ...g, count: CONTRACT_GPUS })),
      power: s.power.kind === "grid" ? { ...s.power, capW: fullPowerW(s.gpus[0]!.type) } : s.power,
    })),
    models: [{ id: family[0]!.model }],
    variants: family,
    policy: { kind: entry.kind, weights: entry.defaultWeights },
  });
}

/** Every GPU of a contract site at TDP, server overhead included. */
function fullPowerW(type: keyof typeof gpuSpecs): number {
  return CONTRACT_GPUS * gpuSpecs[type].tdpW * SERVER_POWER_OVERHEAD;
}

const profiles = new Map<string, ProfileTable>();

/** A small virtual profile of the fleet's variants on its GPU types (TP1, 3 clocks up to the top, 2 loads), made once per fleet model. */
export function contractProfile(fleet: Fleet): ProfileTable {
  const types = [...new Set(fleet.sites.flatMap((s) => s.gpus.map((g) => g.type)))];
  const key = `${fleet.variants.map((v) => `${v.model}/${v.id}`).join(",")}|${types.join(",")}`;
  let table = profiles.get(key);
  if (!table) {
    const rows = fleet.variants.flatMap((v) =>
      types.flatMap((type) => {
        const gpu = gpuSpecs[type];
        const made = virtualProfile({ llm: variantLlmSpec(v.model, v.id), gpu, tps: [1], clocksMhz: defaultClocks(gpu, 3), classes: DYNAMOLLM_CLASS_LENGTHS, loadFractions: [0.15, 0.4], requestsPerPoint: 8, seed: 1 });
        return made.rows.map((r) => ({ ...r, model: v.model, variant: v.id }));
      }),
    );
    table = { version: 1, source: { kind: "virtual", details: { simulated: true, purpose: "policy contract" } }, rows };
    profiles.set(key, table);
  }
  return table;
}

/** The forecasts the contract's edge holds: the wind site's power, the grid site's marginal carbon, a flat load per class. */
export function contractForecasts(fleet: Fleet, nowMs = CONTRACT_NOW): Forecast[] {
  const at = (value: number) => [{ tMs: nowMs - 60_000, value }, { tMs: nowMs + PLANNER_L_PERIOD_MS, value }];
  const site = (id: string) => ({ kind: "site" as const, id: id as SiteId });
  return [
    ...fleet.sites.flatMap((s): Forecast[] =>
      s.power.kind === "wind" ? [{ kind: "power_available", unit: "W", source: "contract", issuedAtMs: nowMs - 60_000, subject: site(s.id), points: at(WIND_SHARE * fullPowerW(s.gpus[0]!.type)) }] : [],
    ),
    ...fleet.sites.flatMap((s): Forecast[] => (s.power.kind === "grid" ? [{ kind: "carbon_marginal", unit: "gCO2/kWh", source: "contract", issuedAtMs: nowMs - 60_000, subject: site(s.id), points: at(300) }] : [])),
    ...fleet.classes.map((c): Forecast => ({ kind: "load", unit: "req/s", source: "contract", issuedAtMs: nowMs - 60_000, subject: { kind: "class", id: c.id }, points: at(DEMAND_RPS) })),
  ];
}

/**
 * What a plan of a policy must keep, whichever the policy: it parses and fits the fleet, it is the
 * policy's (kind; every site's queue discipline and decode routing as the entry asks; every clock
 * the entry's clock policy), it runs something, every site stays within the power it can count
 * on with every instance at the highest clock its setting allows (`sitePowerAtCeilingW`), and with
 * the fleet's `standby` on, every model it serves runs at a second site. Returns what it breaks,
 * empty when nothing.
 */
export function planContractIssues(input: unknown, fleet: Fleet, entry: PolicyEntry, profile: readonly ProfileRow[], powerW: Readonly<Record<string, number>>): string[] {
  const parsed = Plan.safeParse(input);
  if (!parsed.success) return [`the plan does not parse: ${parsed.error.issues[0]?.message} at ${parsed.error.issues[0]?.path.join(".")}`];
  const plan = parsed.data;
  const issues = planAgainstFleet(plan, fleet).map((i) => `${i.path}: ${i.message}`);
  if (plan.policy !== entry.kind) issues.push(`policy ${plan.policy}, not ${entry.kind}`);
  const instances = plan.sites.flatMap((s) => s.instances.map((i) => ({ site: s.site, i })));
  if (instances.length === 0) issues.push("the plan runs nothing");
  for (const s of plan.sites) {
    const asks = entry.site;
    if ((s.queue ?? "fifo-rr") !== asks.queue || (s.decodeRouting ?? "spread") !== asks.decodeRouting || (s.balance ?? "as-routed") !== asks.balance) issues.push(`site ${s.site}: queue ${s.queue}/${s.decodeRouting}/${s.balance}, the policy asks ${asks.queue}/${asks.decodeRouting}/${asks.balance}`);
    const gpus = fleet.sites.find((x) => x.id === s.site)?.gpus ?? [];
    const { watts, unpriced } = sitePowerAtCeilingW(s, gpus, profile);
    issues.push(...unpriced.map((u) => `site ${s.site}: ${u}`));
    if (watts > (powerW[s.site] ?? 0) * (1 + 1e-9)) issues.push(`site ${s.site}: ${watts.toFixed(0)} W at the ceiling clocks, over its ${(powerW[s.site] ?? 0).toFixed(0)} W`);
  }
  for (const { site, i } of instances) {
    const clock = i.clock.mode === "locked" ? "locked" : i.clock.policy;
    if (clock !== entry.clockPolicy) issues.push(`${site}/${i.id}: clock ${clock}, the policy gives ${entry.clockPolicy}`);
  }
  if (fleet.standby && fleet.sites.length > 1) {
    for (const model of new Set(instances.map(({ i }) => i.model))) {
      const at = new Set(instances.filter(({ i }) => i.model === model).map(({ site }) => site));
      if (at.size < 2) issues.push(`model ${model} runs at ${[...at].join(", ")} only: no standby at a second site`);
    }
  }
  return issues;
}
