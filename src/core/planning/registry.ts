import { z } from "zod";
import { heronGreedyMinLatency, HeronGreedyMinLatencyConfig } from "./heron/greedy-min-latency.ts";
import { heronPlannerL, HeronPlannerLConfig } from "./heron/planner-l.ts";
import { heronWrrDynamo, HeronWrrDynamoConfig } from "./heron/wrr-dynamollm.ts";
import { dynamoLlmPlanner, DynamoLlmConfig } from "./dynamollm/dynamollm-planner.ts";
import { greenferencePlanner, GreenferenceConfig } from "./greenference/greenference-planner.ts";
import type { Planner } from "./planner.ts";

/**
 * Every fleet planner that can be selected by name, with its settings. Add a policy by adding its
 * config here and its factory to `plannerFactories` (the compiler asks for it).
 *
 * @example
 * const planner = createPlanner(PlannerConfig.parse({ kind: "heron-planner-l", objective: "min-power" }));
 */
export const PlannerConfig = z.discriminatedUnion("kind", [HeronPlannerLConfig, HeronWrrDynamoConfig, HeronGreedyMinLatencyConfig, DynamoLlmConfig, GreenferenceConfig]);
export type PlannerConfig = z.infer<typeof PlannerConfig>;
export type PlannerKind = PlannerConfig["kind"];

type Factories = { [K in PlannerKind]: (config: Extract<PlannerConfig, { kind: K }>) => Planner };

/** One factory per planner kind. */
export const plannerFactories = {
  "heron-planner-l": (config) => heronPlannerL(config),
  "heron-wrr-dynamollm": () => heronWrrDynamo(),
  "heron-greedy-min-latency": () => heronGreedyMinLatency(),
  dynamollm: (config) => dynamoLlmPlanner(config),
  greenference: (config) => greenferencePlanner(config),
} satisfies Factories;

/** The planner a config selects. */
export function createPlanner(config: PlannerConfig): Planner {
  const factory = plannerFactories[config.kind] as (c: PlannerConfig) => Planner;
  return factory(config);
}
