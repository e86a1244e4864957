import type { LpSolver } from "../ports/lp-solver.ts";
import type { PlannerSInput } from "../planning/heron/planner-s.ts";
import type { Planner } from "../planning/planner.ts";
import type { Policy, PolicyKind, PolicyWeights } from "../schemas/fleet.ts";
import type { GatewayBalance, ClockPolicyName, DecodeRouting, PlanDelta, QueueDiscipline } from "../schemas/plan.ts";

/** A policy's fleet planner: what the cron runs, how often, and how it is built from the fleet's policy. */
export interface FleetPlannerSpec {
  /** Name in cron run messages and plan notes, e.g. "heron-planner-l". */
  name: string;
  /** How often it re-plans (Heron: 15 min; FREESH: a 30-min episode; DynamoLLM's pool manager: 5 min). */
  cadenceMs: number;
  create(policy: Policy): Planner;
}

/** What a corrector decided: the delta to Planner-L's plan, and what it says about it. */
export interface Correction {
  delta: PlanDelta;
  notes: string[];
}

/**
 * A policy's Planner-S: every few seconds, from the power each site has now and each class's demand
 * now, new clocks and routing weights for the plan the fleet planner made (never instances, TP or
 * GPUs). Its input's `plan` is that plan as made (revision 0): each correction replaces the last.
 */
export interface CorrectorSpec {
  name: string;
  correct(input: PlannerSInput, solver: LpSolver, policy: Policy): Correction;
}

/** When the carbon trigger re-optimises (Clover §5.2.2): a site's intensity moved more than `threshold` (relative). */
export interface CarbonTriggerSpec {
  threshold: number;
}

/** What a policy asks of every site: how its gateway queues requests, routes decode pools and balances its instances. */
export interface SiteSettings {
  queue: QueueDiscipline;
  decodeRouting: DecodeRouting;
  balance: GatewayBalance;
}

/**
 * Everything one policy does, at every timescale: its fleet planner (cron), its corrector
 * (Planner-S, in ControlDO's alarm), the clock policy its plans give instances (carried out by the
 * site's local controllers), its carbon trigger (which re-runs the fleet planner) and what it asks
 * of each site's gateway. One entry per `PolicyKind` in `POLICIES`.
 */
export interface PolicyEntry {
  kind: PolicyKind;
  /** One line for docs and the dashboard. */
  summary: string;
  fleetPlanner: FleetPlannerSpec;
  corrector: CorrectorSpec | null;
  /** How its plans set instance clocks: locked by the plan, or a site controller within bounds. */
  clockPolicy: "locked" | ClockPolicyName;
  carbonTrigger: CarbonTriggerSpec | null;
  site: SiteSettings;
  /** Its plans carve GPUs into MIG slices (the local stack then simulates A100s). */
  usesMig: boolean;
  /** It chooses among a model's variants (the local stack then serves a family of them). */
  usesVariants: boolean;
  /** Objective weights for a fleet that picks this policy without its own. */
  defaultWeights: PolicyWeights;
}
