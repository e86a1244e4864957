import { z } from "zod";
import { ClassId, EpochMs, GpuType, InstanceId, SiteId } from "./ids.ts";
import { ClassRates } from "./plan.ts";
import { LatencySummary } from "./profile.ts";
import { reportDuplicates } from "./checks.ts";

/** GPU health as the agent sees it (e.g. from NVML XID events, throttle reasons, lost devices). */
export const GpuHealth = z.enum(["ok", "degraded", "failed"]);
export type GpuHealth = z.infer<typeof GpuHealth>;

/** One GPU's readings. `energyMj` is the driver's cumulative counter (NVML reports millijoules). */
export const GpuTelemetry = z.object({
  index: z.number().int().nonnegative(),
  type: GpuType,
  powerW: z.number().nonnegative(),
  energyMj: z.number().nonnegative(),
  smClockMhz: z.number().nonnegative(),
  /** The locked SM clock, or null when the driver picks the clock. */
  lockedClockMhz: z.number().positive().nullable(),
  temperatureC: z.number().optional(),
  health: GpuHealth,
});
export type GpuTelemetry = z.infer<typeof GpuTelemetry>;

export const InstanceState = z.enum(["starting", "ready", "draining", "stopped", "failed"]);
export type InstanceState = z.infer<typeof InstanceState>;

const latency = LatencySummary.refine((l) => l.p50 <= l.p99, { message: "p99 must be at least p50", path: ["p99"] });

/** One engine instance's queue, cache and service over the last reporting window. */
export const InstanceTelemetry = z.object({
  id: InstanceId,
  state: InstanceState,
  /**
   * Starting, and meanwhile the site serves its requests on the engines of the plan before, kept
   * until it is up (make-before-break): routing sends it its share. Queue and KV use are then those
   * engines'.
   */
  covered: z.boolean().optional(),
  /**
   * Replicas whose engine runs but stopped answering its health checks (hung): they take no
   * requests, and the instance is reported failed meanwhile. Absent when none (and from older agents).
   */
  unresponsive: z.number().int().positive().optional(),
  /**
   * Replicas whose engine answers but whose metrics could not be read for a while (the agent's hold
   * of their last reading ran out): left out of `waiting`, `running` and `kvUse`, and routing counts
   * the instance as saturated, as an unknown queue may be a long one. Absent when none (and from
   * older agents).
   */
  unread: z.number().int().positive().optional(),
  waiting: z.number().int().nonnegative(),
  running: z.number().int().nonnegative(),
  /** Fraction of KV-cache blocks in use. */
  kvUse: z.number().min(0).max(1),
  servedRps: ClassRates.default({}),
  /** Absent when no request finished in the window. */
  ttftMs: latency.optional(),
  tbtMs: latency.optional(),
});
export type InstanceTelemetry = z.infer<typeof InstanceTelemetry>;

/** Answered requests of one class judged against its SLO, and those that met it. */
export const SloCount = z
  .object({ judged: z.number().int().nonnegative(), met: z.number().int().nonnegative() })
  .refine((c) => c.met <= c.judged, { message: "met cannot exceed judged", path: ["met"] });
export type SloCount = z.infer<typeof SloCount>;

/** Most classes a heartbeat may count (class schemes have a handful). */
export const MAX_COUNTED_CLASSES = 64;

/**
 * A site's running SLO counts per class since `sinceMs` (when the agent started counting; a new
 * value means the counts started again from zero): each answered request that came with its
 * class's SLO (`x-greenference-slo`) and could be judged (`meetsSlo`) adds to `judged`, and to
 * `met` when it met it.
 */
export const SloCounters = z.object({
  sinceMs: EpochMs,
  classes: z
    .record(ClassId, SloCount)
    .refine((c) => Object.keys(c).length <= MAX_COUNTED_CLASSES, { message: `at most ${MAX_COUNTED_CLASSES} classes` }),
});
export type SloCounters = z.infer<typeof SloCounters>;

/** A site gateway's prefill/decode handoff counts (`Telemetry.prefillHandoffs`). */
export const PrefillHandoffCounts = z.object({ handedOff: z.number().int().nonnegative(), whole: z.number().int().nonnegative(), failed: z.number().int().nonnegative() });
export type PrefillHandoffCounts = z.infer<typeof PrefillHandoffCounts>;

/** The rungs of DynamoLLM's emergency ladder above "none", lowest first (`EMERGENCY_STEPS`). */
export const EmergencyRung = z.enum(["reorder", "max-clock", "re-steer", "squash"]);
export type EmergencyRung = z.infer<typeof EmergencyRung>;

/**
 * An instance where DynamoLLM's emergency ladder stands (`Telemetry.emergencies`): the rung its
 * instance manager took, and the requests the site gateway holds for it meanwhile.
 */
export const EmergencyStanding = z.object({ instance: InstanceId, step: EmergencyRung, held: z.number().int().nonnegative() });
export type EmergencyStanding = z.infer<typeof EmergencyStanding>;

/** A planned clock controller (EcoFreq, MIAD, instance manager) that could not start; its GPUs stay locked to the plan's bounds. */
export const ControllerFault = z.object({ instance: InstanceId, policy: z.string().min(1).max(32), reason: z.string().min(1).max(500) });
export type ControllerFault = z.infer<typeof ControllerFault>;

/**
 * A site's heartbeat, pushed by its host agent every few seconds. `appliedPlanVersion` is null until
 * the site has applied a plan.
 *
 * @example
 * const t = Telemetry.parse(body); // GPU indices and instance ids must be unique
 */
export const Telemetry = z
  .object({
    site: SiteId,
    sentAtMs: EpochMs,
    appliedPlanVersion: z.number().int().nonnegative().nullable(),
    /** Measured at the site's meter (server overhead included), not summed from GPUs. */
    sitePowerW: z.number().nonnegative(),
    gpus: z.array(GpuTelemetry),
    instances: z.array(InstanceTelemetry),
    pendingReconfigurations: z.number().int().nonnegative().default(0),
    /** The agent's power ladder (0 "none"; higher rungs hold clocks or power down while the site exceeds its plan's power cap). */
    powerLadder: z.object({ level: z.number().int().nonnegative(), step: z.string().min(1) }).optional(),
    /** Absent from agents that do not count (older ones). */
    sloCounts: SloCounters.optional(),
    /**
     * Requests for decode pools since the site's gateway started: prefilled on a prefill replica and
     * decoded from the KV, served whole by the decode replica, and those whose prefill failed beside
     * an SGLang decode. Absent where no gateway runs.
     */
    prefillHandoffs: PrefillHandoffCounts.optional(),
    /** Where instance managers run DynamoLLM's emergency ladder: the instances where it stands now (empty: none). Absent where none runs. */
    emergencies: z.array(EmergencyStanding).max(256).optional(),
    /** FREESH's Jain fairness over the site's classes' output-length groups in the reporting window (Eq. 9, `timelyTokenFairness`); absent with too few requests. */
    fairness: z.number().min(0).max(1).optional(),
    /** Planned clock controllers that could not start (a model the performance model does not know, no profile), and why. */
    controllerFaults: z.array(ControllerFault).max(256).optional(),
  })
  .superRefine((t, ctx) => {
    reportDuplicates(ctx, t.gpus.map((g) => g.index), (i) => ["gpus", i, "index"], "GPU index");
    reportDuplicates(ctx, t.instances.map((i) => i.id), (i) => ["instances", i, "id"], "instance id");
  });
export type Telemetry = z.infer<typeof Telemetry>;
