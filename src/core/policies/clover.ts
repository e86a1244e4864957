import { CLOVER_CARBON_TRIGGER } from "../planning/clover/controller.ts";
import { cloverPlanner, CloverPlannerConfig } from "../planning/clover/clover-planner.ts";
import { PLANNER_L_PERIOD_MS } from "../planning/planning-input.ts";
import type { PolicyEntry } from "./policy-entry.ts";

/**
 * Clover (seed 001): model variants and MIG slices by simulated annealing at each site's carbon
 * intensity, re-optimised when an intensity moves more than 5% (and every slot for the demand);
 * λ weighs carbon against accuracy as the fleet's weights do.
 */
export const cloverPolicy: PolicyEntry = {
  kind: "clover",
  summary: "model variants x MIG slices by simulated annealing at each site's carbon intensity; carbon trigger (> 5%) re-optimises; top clock",
  fleetPlanner: {
    name: "clover",
    cadenceMs: PLANNER_L_PERIOD_MS,
    create: (policy) => {
      const { carbon, accuracy } = policy.weights;
      return cloverPlanner(CloverPlannerConfig.parse({ kind: "clover", lambda: carbon + accuracy > 0 ? carbon / (carbon + accuracy) : 0.5 }));
    },
  },
  corrector: null,
  clockPolicy: "locked",
  carbonTrigger: { threshold: CLOVER_CARBON_TRIGGER },
  site: { queue: "fifo-rr", decodeRouting: "spread", balance: "as-routed" },
  usesMig: true,
  usesVariants: true,
  defaultWeights: { carbon: 1, energy: 0, latency: 0, accuracy: 1 },
};
