import type { Policy } from "../schemas/fleet.ts";
import { PlannerConfig } from "./registry.ts";

/**
 * The fleet planner that carries out a fleet's policy, or null for policies that plan elsewhere:
 * Clover re-optimises on its carbon trigger, FREESH plans pools per site, GreenServe is a
 * site-local frequency controller. Heron plans for least power when the policy weighs energy or
 * carbon above latency (its min-power variant), else for least latency; the combined planner
 * takes the policy's weights as they are.
 *
 * @example
 * plannerConfigForPolicy({ kind: "heron", weights: { carbon: 0, energy: 1, latency: 0, accuracy: 0 } });
 * // { kind: "heron-planner-l", objective: "min-power" }
 */
export function plannerConfigForPolicy(policy: Policy): PlannerConfig | null {
  const w = policy.weights;
  switch (policy.kind) {
    case "heron":
      return PlannerConfig.parse({ kind: "heron-planner-l", objective: w.energy + w.carbon > w.latency ? "min-power" : "min-latency" });
    case "dynamollm":
      return PlannerConfig.parse({ kind: "dynamollm" });
    case "greenference":
      return PlannerConfig.parse({ kind: "greenference", weights: w });
    case "clover":
    case "freesh":
    case "greenserve":
      return null;
  }
}
