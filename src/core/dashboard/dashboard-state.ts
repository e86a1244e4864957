import { z } from "zod";
import { CarbonSignal, Policy, PolicyKind, type CarbonSource, type PowerSource } from "../schemas/fleet.ts";
import { ClassId, EpochMs, GpuType, InstanceId, ModelId, SiteId, VariantId } from "../schemas/ids.ts";
import { MigSlice } from "../schemas/mig.ts";
import { ClassRates, ClockSetting, InstanceRole } from "../schemas/plan.ts";
import { Slo, SloTier } from "../schemas/request-class.ts";
import { GpuHealth, InstanceState } from "../schemas/telemetry.ts";
import { DashboardDecisions } from "./policy-decisions.ts";

/** Who may read the dashboard's state: holders of the read-only dashboard token or the admin token ("admin"), or anyone (local development). */
export const DashboardAccess = z.enum(["admin", "public"]);
export type DashboardAccess = z.infer<typeof DashboardAccess>;

const Watts = z.number().nonnegative();
const Fraction = z.number().min(0).max(1);
const PowerKind = z.enum(["wind", "grid", "fixed"]) satisfies z.ZodType<PowerSource["kind"]>;
const CarbonKind = z.enum(["electricitymaps", "watttime", "uk-carbon-intensity", "replay", "fixed"]) satisfies z.ZodType<CarbonSource["kind"]>;
/** Share of a class's load per site id; the shares sum to 1. */
const Shares = z.record(z.string(), Fraction);
const Count = z.number().int().nonnegative();

/** Requests judged against their class's SLO over the SLO window, those that met it, and the attainment (null with too few judged). */
export const DashboardSlo = z.object({ judged: Count, met: Count, attainment: Fraction.nullable() });
export type DashboardSlo = z.infer<typeof DashboardSlo>;

/** One point of a site's recent history: the measured draw and the envelope and carbon intensity in force then. */
export const DashboardHistoryPoint = z.object({
  tMs: EpochMs,
  drawW: Watts,
  envelopeW: Watts.nullable(),
  carbonGPerKwh: z.number().nullable(),
});
export type DashboardHistoryPoint = z.infer<typeof DashboardHistoryPoint>;

/** An instance as planned (null: the site reports it but the plan has none) and as reported (null: no heartbeat lists it). */
export const DashboardInstance = z.object({
  id: InstanceId,
  planned: z
    .object({ model: ModelId, variant: VariantId, tp: z.number().int().positive(), replicas: z.number().int().positive(), role: InstanceRole, clock: ClockSetting, gpus: z.array(z.number().int().nonnegative()), mig: MigSlice.optional() })
    .nullable(),
  reported: z
    .object({
      state: InstanceState,
      waiting: z.number().int().nonnegative(),
      running: z.number().int().nonnegative(),
      kvUse: Fraction,
      servedRps: ClassRates,
      ttftP99Ms: z.number().nonnegative().nullable(),
      tbtP99Ms: z.number().nonnegative().nullable(),
    })
    .nullable(),
  /** Why the instance's clock controller could not start, as its site reported; absent when it runs or none is planned. */
  controllerFault: z.object({ policy: z.string(), reason: z.string() }).optional(),
});
export type DashboardInstance = z.infer<typeof DashboardInstance>;

export const DashboardSite = z.object({
  id: SiteId,
  region: z.string(),
  health: z.object({
    /** False before the first heartbeat and once none came within the heartbeat timeout. */
    healthy: z.boolean(),
    lastSeenMs: EpochMs.nullable(),
    heartbeatAgeMs: z.number().nonnegative().nullable(),
  }),
  power: z.object({
    source: PowerKind,
    /** What the site may draw now: its power forecast, else its fleet cap; null when neither exists (a grid site without a cap, a wind site without a forecast). */
    envelopeW: Watts.nullable(),
    envelopeFrom: z.enum(["forecast", "fleet"]).nullable(),
    /** The current plan's cap for the site. */
    planCapW: Watts.nullable(),
    /** What the site's GPUs can draw at full power with server overhead (TDP x count x SERVER_POWER_OVERHEAD): the most it can use of any envelope. */
    capacityW: Watts,
    /** The site meter's reading in the newest heartbeat (server overhead included). */
    drawW: Watts.nullable(),
    /** The GPUs' own draw summed from the same heartbeat. */
    gpuDrawW: Watts.nullable(),
  }),
  carbon: z.object({
    /** The intensity routing and receipts use now. */
    gPerKwh: z.number(),
    origin: z.enum(["fleet", "reported", "default"]),
    signal: CarbonSignal,
    source: CarbonKind,
  }),
  gpus: z.object({
    configured: z.array(z.object({ type: GpuType, count: z.number().int().positive() })),
    total: z.number().int().nonnegative(),
    reported: z.array(z.object({ index: z.number().int().nonnegative(), type: GpuType, powerW: Watts, smClockMhz: z.number().nonnegative(), lockedClockMhz: z.number().positive().nullable(), health: GpuHealth })),
  }),
  instances: z.array(DashboardInstance),
  appliedPlanVersion: z.number().int().nonnegative().nullable(),
  /** Served req/s per class summed over the site's instances in the newest heartbeat; null before one. */
  servedRps: ClassRates.nullable(),
  /** Its requests over the SLO window (state.slo.windowMs). */
  sloWindow: DashboardSlo,
  /** Energy and carbon of the requests answered here, per the receipts. */
  energyJ: Watts,
  carbonG: z.number().nonnegative(),
  history: z.array(DashboardHistoryPoint),
});
export type DashboardSite = z.infer<typeof DashboardSite>;

export const DashboardClass = z.object({
  id: ClassId,
  tier: SloTier,
  slo: Slo,
  /** The plan's routing weights as shares per site; empty when the plan routes the class nowhere. */
  planShares: Shares,
  /** Served req/s per site (healthy sites' newest heartbeats) as shares; null when none is served. */
  measuredShares: Shares.nullable(),
  servedRps: z.number().nonnegative().nullable(),
  /** Routing decisions the edge counted so far, as shares per site; null before the first. */
  routedShares: Shares.nullable(),
  routedRequests: z.number().nonnegative(),
  /** The class's requests at every site over the SLO window. */
  sloWindow: DashboardSlo,
});
export type DashboardClass = z.infer<typeof DashboardClass>;

/**
 * Everything the operator dashboard shows, as `GET /dashboard/v1/state` returns it. Unknown
 * figures are null; nothing is filled in.
 */
export const DashboardState = z.object({
  generatedAtMs: EpochMs,
  access: DashboardAccess,
  heartbeatTimeoutMs: z.number().positive(),
  /** Null before a fleet is configured. */
  fleet: z.object({ policy: Policy }).nullable(),
  plan: z
    .object({
      version: z.number().int().nonnegative(),
      policy: PolicyKind,
      /** When the planner made it (the plan's createdAtMs). */
      madeAtMs: EpochMs,
      /** When ControlDO accepted it; null when its summary was compacted away. */
      storedAtMs: EpochMs.nullable(),
      validUntilMs: EpochMs,
      notes: z.array(z.string()),
      shortfall: ClassRates,
    })
    .nullable(),
  sites: z.array(DashboardSite),
  classes: z.array(DashboardClass),
  /** What the fleet's policy does and what the plan in force decided (null before a fleet). */
  decisions: DashboardDecisions.nullable(),
  /** The fleet's requests over the last `windowMs`; attainment is given from `minRequests` judged requests. */
  slo: DashboardSlo.extend({ method: z.string(), windowMs: z.number().positive(), minRequests: Count }),
  energy: z.object({
    energyJ: Watts,
    carbonG: z.number().nonnegative(),
    baseline: z.object({ name: z.string(), method: z.string(), energyJ: Watts.nullable(), carbonG: z.number().nonnegative().nullable() }),
    savedCarbonG: z.number().nullable(),
    savedCarbonFraction: z.number().nullable(),
  }),
});
export type DashboardState = z.infer<typeof DashboardState>;
