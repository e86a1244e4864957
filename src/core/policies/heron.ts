import { applyDelta } from "../planning/apply-delta.ts";
import { heronPacking } from "../planning/heron/packing.ts";
import { heronPlannerL, HeronPlannerLConfig } from "../planning/heron/planner-l.ts";
import { heronPlannerS } from "../planning/heron/planner-s.ts";
import { PLANNER_L_PERIOD_MS } from "../planning/planning-input.ts";
import type { PolicyWeights } from "../schemas/fleet.ts";
import type { PolicyEntry } from "./policy-entry.ts";

/** Heron plans for least power when the energy and carbon weights together exceed the latency weight (its min-power variant), else for least latency. */
export function heronObjective(w: PolicyWeights): "min-power" | "min-latency" {
  return w.energy + w.carbon > w.latency ? "min-power" : "min-latency";
}

/**
 * Heron (seed 000): Planner-L every 15 minutes on the fleet's power forecasts, locked clocks;
 * Planner-S every few seconds re-picks clock and load per entry for the power and demand of the
 * moment, then packing routes smaller requests to larger classes' spare instances.
 */
export const heronPolicy: PolicyEntry = {
  kind: "heron",
  summary: "Planner-L (15 min ILP: instances x TP x clock x load per site under its power) and Planner-S (clock and load every few seconds), packing, locked clocks",
  fleetPlanner: {
    name: "heron-planner-l",
    cadenceMs: PLANNER_L_PERIOD_MS,
    create: (policy) => heronPlannerL(HeronPlannerLConfig.parse({ kind: "heron-planner-l", objective: heronObjective(policy.weights) })),
  },
  corrector: {
    name: "heron-planner-s + packing",
    correct(input, solver, policy) {
      const s = heronPlannerS(input, solver, heronObjective(policy.weights));
      const demand = Object.fromEntries(input.classes.map((c) => [c.id, c.demandRps]));
      const { routing, moves } = heronPacking(applyDelta(input.plan, s.delta), input.classes, demand);
      const moved = moves.reduce((sum, m) => sum + m.rps, 0);
      const short = Object.entries(s.shortfall).map(([c, rps]) => `${c} ${rps.toFixed(2)} req/s`);
      return {
        delta: { ...s.delta, routing: { ...s.delta.routing, ...routing } },
        notes: [`planner-s: ${s.delta.clocks.length} clock changes over ${s.stats.movable} entries${short.length ? `, short ${short.join(", ")}` : ""}`, `packing: ${moved.toFixed(2)} req/s onto larger classes' instances`],
      };
    },
  },
  clockPolicy: "locked",
  carbonTrigger: null,
  site: { queue: "fifo-rr", decodeRouting: "spread", balance: "as-routed" },
  usesMig: false,
  usesVariants: false,
  defaultWeights: { carbon: 0, energy: 1, latency: 0, accuracy: 0 },
};
