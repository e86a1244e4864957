import type { GpuSpec } from "../../model/gpu-specs.ts";
import type { ClassId, SiteId } from "../../schemas/ids.ts";
import type { Plan, PlanDelta } from "../../schemas/plan.ts";
import type { ProfileRow } from "../../schemas/profile.ts";
import type { Slo } from "../../schemas/request-class.ts";
import type { TimeSeries } from "./time-series.ts";

/** A GPU site as the fleet simulator sees it. */
export interface FleetSite {
  id: SiteId;
  gpu: GpuSpec;
  gpus: number;
  /** Power available to the site (W), including server overhead. */
  power: TimeSeries;
  /** Carbon intensity of what the site draws (gCO2/kWh). */
  carbon: TimeSeries;
}

/** Request rate per class over time (req/s); `tS` is seconds since the start of the run. */
export interface FleetWorkload {
  classes: readonly ClassId[];
  rateRps(tS: number, classId: ClassId): number;
}

/** What a planner sees when it runs. Demand is the workload's rate for the coming period (a perfect forecast). */
export interface PlanningContext {
  nowS: number;
  periodS: number;
  sites: ReadonlyArray<{ id: SiteId; gpu: GpuSpec; gpus: number; availableW: number; carbonGPerKwh: number }>;
  demandRps: Readonly<Record<ClassId, number>>;
  profile: readonly ProfileRow[];
  slo: Readonly<Record<ClassId, Slo>>;
  model: string;
  current?: Plan;
}

/** A planner that the simulator calls every `cadenceS` seconds; it returns the plan to apply. */
export interface FleetPlanner {
  name: string;
  cadenceS: number;
  plan(ctx: PlanningContext): Plan;
}

/**
 * A fast planner (Heron's Planner-S, DynamoLLM's instance manager) that corrects clocks and routing
 * weights of the plan in force every `cadenceS` seconds; it never changes instances.
 */
export interface FleetCorrector {
  name: string;
  cadenceS: number;
  correct(ctx: PlanningContext & { current: Plan }): PlanDelta | undefined;
}

/** Seconds an instance is unavailable after a change. */
export interface ReconfigurationDelays {
  startS: number;
  tpChangeS: number;
  /** A plan's clock change in the flow-level simulator, which has no iterations. */
  clockChangeS: number;
  /**
   * The stall an engine takes each time its clock is set, ms: the per-request simulator's engines
   * set clocks per iteration (EcoFreq) or per epoch (instance managers). Absent: `ENGINE_CLOCK_SWITCH_MS`.
   */
  clockSwitchMs?: number;
}

/**
 * An engine's stall per clock switch, ms: GreenServe §V-C measures nvmlDeviceSetGpuLockedClocks,
 * the call the site agent makes, at under 3 ms (DynamoLLM §III reports 50-80 ms through an
 * nvidia-smi process started per change, which both papers avoid).
 */
export const ENGINE_CLOCK_SWITCH_MS = 3;

export interface FleetSimConfig {
  sites: readonly FleetSite[];
  workload: FleetWorkload;
  profile: readonly ProfileRow[];
  model: string;
  slo: Readonly<Record<ClassId, Slo>>;
  planner: FleetPlanner;
  corrector?: FleetCorrector;
  durationS: number;
  stepS?: number;
  /** Length of a "slot" for counting slots with drops (Heron: 15 min). */
  slotS?: number;
  /** Longest a request waits at the router for room before it is dropped (default 5 s). */
  maxQueueS?: number;
  /**
   * Work that can wait (batch): classes whose requests wait up to `maxQueueS` for their own
   * instances and are never taken by other classes' instances standing in while theirs start;
   * instances that serve only them stand in for no other class.
   * Their arrivals come from a random stream of their own, so the other classes' arrivals are
   * the same with and without them.
   */
  deferrable?: { classes: readonly ClassId[]; maxQueueS: number };
  /** Interval of the recorded time series for plots. */
  recordEveryS?: number;
  reconfiguration?: ReconfigurationDelays;
  /** Keep instances a plan removes serving until their replacements are ready (default true; see `drainingGroups`). */
  makeBeforeBreak?: boolean;
  /** Multiplier of GPU power for the rest of the server (Heron: 1.82). */
  serverOverhead?: number;
  seed: number;
}
