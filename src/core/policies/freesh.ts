import { freeshPoolPlanner, FreeshPoolPlannerConfig } from "../planning/freesh/pool-planner.ts";
import type { PolicyEntry } from "./policy-entry.ts";

/** FREESH re-plans its pools once per 30-minute episode. */
const EPISODE_MS = 30 * 60 * 1000;

/**
 * FREESH (seed 002): the pool MILP once per episode over its selectable length partitions
 * (carbon objective on each site's intensity when the weights put carbon above energy), MIAD
 * clocks and least-laxity-first queues at the sites.
 */
export const freeshPolicy: PolicyEntry = {
  kind: "freesh",
  summary: "pool MILP per 30-min episode over length partitions; MIAD clocks and LLF queues at the sites; Jain fairness",
  fleetPlanner: {
    name: "freesh-pool",
    cadenceMs: EPISODE_MS,
    create: (policy) => freeshPoolPlanner(FreeshPoolPlannerConfig.parse({ kind: "freesh-pool", objective: policy.weights.carbon > policy.weights.energy ? "carbon" : "energy" })),
  },
  corrector: null,
  clockPolicy: "miad",
  carbonTrigger: null,
  site: { queue: "llf", decodeRouting: "spread", balance: "as-routed" },
  usesMig: false,
  usesVariants: false,
  defaultWeights: { carbon: 1, energy: 0, latency: 0, accuracy: 0 },
};
