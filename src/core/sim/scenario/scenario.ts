import { z } from "zod";
import { SiteId } from "../../schemas/ids.ts";
import { PlannerConfig } from "../../planning/registry.ts";

/** At least one value, each greater than the one before: a list in any other order or with repeats is a mistake. */
const increasing = (item: z.ZodNumber) => z
  .array(item)
  .min(1)
  .refine((xs) => xs.every((x, i) => i === 0 || x > xs[i - 1]!), "must increase, each value once");

/** A data file column replayed as a series; `startHour` is the first hour of the file used. */
const Replay = z.object({ file: z.string().min(1), startHour: z.number().int().nonnegative().default(0) });

/** Where a site's power envelope comes from. */
export const ScenarioPower = z.discriminatedUnion("kind", [
  /** A grid CSV's WND column scaled to `peakMW` and right-sized at a percentile (Heron §2.2). */
  Replay.extend({ kind: z.literal("wind"), peakMW: z.number().positive(), rightSizePercentile: z.number().gt(0).lt(100).default(20) }),
  /** A fixed cap (a grid-connected site's contracted power). */
  z.object({ kind: z.literal("fixed"), watts: z.number().positive() }),
]);

/** Where a site's carbon intensity comes from. */
export const ScenarioCarbon = z.discriminatedUnion("kind", [
  /** A grid CSV's avg_CI column (gCO2/kWh). */
  Replay.extend({ kind: z.literal("grid") }),
  /** A constant, e.g. wind's life-cycle intensity. */
  z.object({ kind: z.literal("fixed"), gPerKwh: z.number().nonnegative() }),
]);

export const ScenarioSite = z.object({
  id: SiteId,
  gpu: z.enum(["a100", "h100"]),
  /** GPU count, or "from-power": as many as the power source's right-sized budget supports. */
  gpus: z.union([z.number().int().positive(), z.literal("from-power")]),
  power: ScenarioPower,
  carbon: ScenarioCarbon,
});

export const ScenarioWorkload = z.discriminatedUnion("kind", [
  /** The trace's requests replayed at their own times (rates per minute), scaled by `multiplier`. */
  z.object({ kind: z.literal("trace"), file: z.string().min(1), multiplier: z.number().positive().default(1) }),
  /** A synthetic week shaped like DynamoLLM's traces, class mix from the trace. Labelled synthetic. */
  z.object({
    kind: z.literal("synthetic-week"),
    file: z.string().min(1),
    shape: z.enum(["conversation", "coding"]).default("conversation"),
    meanRps: z.number().positive(),
    multiplier: z.number().positive().default(1),
  }),
]);

export const ScenarioPolicy = z.discriminatedUnion("kind", [
  /** Replicas per class in proportion to demand, routed by capacity (the WRR-by-capacity baseline). */
  z.object({ kind: z.literal("capacity"), cadenceS: z.number().int().positive().default(900), tp: z.number().int().positive(), mhz: z.union([z.number().positive(), z.literal("max")]).default("max"), headroom: z.number().gt(0).default(1.2) }),
  /** A planner of the policy registry by its config, optionally with Heron's Planner-S correcting it. */
  z.object({
    kind: z.literal("planner"),
    planner: PlannerConfig,
    cadenceS: z.number().int().positive().default(900),
    plannerS: z.object({ objective: z.enum(["min-latency", "min-power"]).default("min-latency"), cadenceS: z.number().positive().default(5) }).optional(),
  }),
]);

/**
 * A fleet simulation: sites with power and carbon sources, a workload, a policy, a duration and a
 * seed. File paths are relative to the scenario file. Every field is checked; an error names the
 * path of the offending field.
 */
export const Scenario = z
  .object({
  name: z.string().min(1),
  seed: z.number().int().nonnegative(),
  durationS: z.number().int().positive(),
  stepS: z.number().positive().default(1),
  slotS: z.number().int().positive().default(900),
  /** Longest a request waits at the router for room before it is dropped. */
  maxQueueS: z.number().nonnegative().default(5),
  model: z.string().min(1),
  sites: z.array(ScenarioSite).min(1),
  workload: ScenarioWorkload,
  /** Class edges: these percentiles of the trace's input and output lengths. */
  classPercentiles: increasing(z.number().gt(0).lt(100)).default([33, 66]),
  /** SLO = this multiple of a class's unloaded latency on TP8 at max clock (Heron, DynamoLLM: 5); below 1 no request can meet it. */
  sloMultiple: z.number().min(1, "must be at least 1: below, no request can meet its SLO").default(5),
  profile: z
    .object({ tps: increasing(z.number().int().positive()).default([2, 4, 8]), loadFractions: increasing(z.number().gt(0).max(1)).default([0.05, 0.1, 0.2, 0.3, 0.4, 0.5]), requestsPerPoint: z.number().int().positive().default(100), seed: z.number().int().nonnegative().default(1) })
    .prefault({}),
  policy: ScenarioPolicy,
})
  .superRefine((s, ctx) => {
    for (const issue of vacuousSettings(s)) ctx.addIssue({ code: "custom", ...issue });
  });
export type Scenario = z.infer<typeof Scenario>;

/**
 * Settings each field allows but that together leave nothing to simulate or serve: a step longer
 * than the run (or one that runs past its end), a TP the profile does not have.
 */
function vacuousSettings(s: Scenario): Array<{ path: PropertyKey[]; message: string }> {
  const out: Array<{ path: PropertyKey[]; message: string }> = [];
  const steps = s.durationS / s.stepS;
  if (s.stepS > s.durationS) out.push({ path: ["stepS"], message: `a step of ${s.stepS} s is longer than the run (durationS ${s.durationS} s)` });
  else if (Math.abs(steps - Math.round(steps)) > 1e-9 * steps) out.push({ path: ["stepS"], message: `${s.stepS} s does not divide durationS (${s.durationS} s): the last step would run past the end` });
  const tps = s.profile.tps;
  const unprofiled = (tp: number) => `TP ${tp} is not in the profile (profile.tps: ${tps.join(", ")})`;
  const p = s.policy;
  if (p.kind === "capacity" && !tps.includes(p.tp)) out.push({ path: ["policy", "tp"], message: unprofiled(p.tp) });
  if (p.kind === "planner" && p.planner.kind === "dynamollm") {
    const missing = p.planner.tps?.find((tp) => !tps.includes(tp));
    if (missing !== undefined) out.push({ path: ["policy", "planner", "tps"], message: unprofiled(missing) });
  }
  return out;
}
