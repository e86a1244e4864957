import type { DemandSample } from "../src/core/forecast/demand-estimate.ts";
import type { ForecastCompaction } from "../src/core/forecast/forecast-store.ts";
import type { SampleRetention } from "../src/core/forecast/sample-compaction.ts";
import type { Fleet } from "../src/core/schemas/fleet.ts";
import type { Forecast } from "../src/core/schemas/forecast.ts";
import type { Plan } from "../src/core/schemas/plan.ts";
import type { ProfileRow } from "../src/core/schemas/profile.ts";
import type { SiteStatus } from "../src/core/routing/site-status.ts";
import type { CorrectionRecord } from "./planner-s-loop.ts";

// The shapes ControlDO's RPC methods take and return that no store owns.

/** How long history is kept; see ControlDO.compactHistory. */
export interface HistoryRetention {
  forecasts: SampleRetention;
  cronRunsMs: number;
  planSummariesMs: number;
  carbonTriggersMs: number;
}

/** What a compaction removed. */
export interface HistoryCompaction extends ForecastCompaction {
  cronRunsDropped: number;
  planSummariesDropped: number;
  carbonTriggersDropped: number;
}

/** What the long-horizon planner reads, in one round trip. */
export interface PlanningContext {
  fleet: Fleet | null;
  plan: Plan | null;
  /** The fleet's policy (kind or weights) changed after the plan in force was stored. */
  policyChangedSincePlan: boolean;
  forecasts: Forecast[];
  metricTotals: Record<string, number>;
  demandSample: DemandSample | null;
}

/** What the dashboard reads, in one round trip. */
export interface DashboardContext {
  fleet: Fleet | null;
  plan: Plan | null;
  planStoredAtMs: number | null;
  carbon: Record<string, number>;
  metricTotals: Record<string, number>;
  /** By series key: the power and carbon forecasts of fleet sites in force over the asked window (see forecastsOver). */
  forecasts: Record<string, Forecast[]>;
  /** Planner-S corrections of the plan in force and before, newest first. */
  corrections: CorrectionRecord[];
}

/** What DeferralDO reads from ControlDO each slot (see ControlDO.deferralSources). */
export interface DeferralSources {
  fleet: Fleet | null;
  plan: Plan | null;
  forecasts: Forecast[];
  statuses: Record<string, SiteStatus>;
  carbon: Record<string, number>;
  /** The stored table's time, and its rows when they changed since the caller's copy (else null). */
  profile: { storedAtMs: number; rows: ProfileRow[] | null } | null;
}

/**
 * What the control plane's state gauges show at `GET /metrics`: the plan in force, each fleet site's
 * health and last heartbeat, and each cron handler's last run and last success. Read at scrape time.
 */
export interface ControlGauges {
  plan: { version: number; policy: string; createdAtMs: number; validUntilMs: number } | null;
  sites: { site: string; healthy: boolean; lastSeenMs: number | null }[];
  cron: { handler: string; lastRunMs: number; lastOkMs: number | null }[];
}

