import { greenServePlanner, GreenServePlannerConfig } from "../planning/greenserve/greenserve-planner.ts";
import { PLANNER_L_PERIOD_MS } from "../planning/planning-input.ts";
import type { PolicyEntry } from "./policy-entry.ts";

/**
 * GreenServe (seed 004): prefill and decode instances per site, EcoFreq picking each iteration's
 * clock between the sweet spot and the top clock, EcoRoute spreading decode over replicas as
 * Algorithm 2 does.
 */
export const greenservePolicy: PolicyEntry = {
  kind: "greenserve",
  summary: "prefill/decode disaggregation per site; EcoFreq per iteration (simulated engines) or from metrics (vLLM, SGLang); EcoRoute over decode replicas",
  fleetPlanner: { name: "greenserve", cadenceMs: PLANNER_L_PERIOD_MS, create: () => greenServePlanner(GreenServePlannerConfig.parse({ kind: "greenserve" })) },
  corrector: null,
  clockPolicy: "ecofreq",
  carbonTrigger: null,
  site: { queue: "fifo-rr", decodeRouting: "spread", balance: "as-routed" },
  usesMig: false,
  usesVariants: false,
  defaultWeights: { carbon: 0, energy: 1, latency: 0, accuracy: 0 },
};
