import { dynamoLlmPlanner, DynamoLlmConfig } from "../planning/dynamollm/dynamollm-planner.ts";
import type { PolicyEntry } from "./policy-entry.ts";

/** DynamoLLM's pool manager re-plans every 5 minutes (the cluster manager's 30-minute epochs live inside the planner). */
const POOL_MANAGER_PERIOD_MS = 5 * 60 * 1000;

/**
 * DynamoLLM (seed 003): per site and GPU type, the cluster manager sizes per-class pools for the
 * 30-minute epoch, the pool manager picks each pool's TP layout every 5 minutes, and the site's
 * instance manager picks the lowest-energy clock that meets the SLO every 5 s, climbing the
 * emergency ladder when a pool misses it.
 */
export const dynamollmPolicy: PolicyEntry = {
  kind: "dynamollm",
  summary: "cluster (30 min) and pool (5 min) managers in the cron; the site's instance manager (5 s) and emergency ladder",
  fleetPlanner: { name: "dynamollm", cadenceMs: POOL_MANAGER_PERIOD_MS, create: () => dynamoLlmPlanner(DynamoLlmConfig.parse({ kind: "dynamollm" })) },
  corrector: null,
  clockPolicy: "instance-manager",
  carbonTrigger: null,
  site: { queue: "fifo-rr", decodeRouting: "spread", balance: "as-routed" },
  usesMig: false,
  usesVariants: false,
  defaultWeights: { carbon: 0, energy: 1, latency: 0, accuracy: 0 },
};
