import { DurableObject } from "cloudflare:workers";
import { z } from "zod";
import { appendBounded, DRAW_HISTORY_LIMITS, SLO_HISTORY_LIMITS } from "../src/core/dashboard/bounded-history.ts";
import type { SloSample } from "../src/core/dashboard/slo-window.ts";
import type { ForecastPoint } from "../src/core/schemas/forecast.ts";
import { Telemetry } from "../src/core/schemas/telemetry.ts";
import { sameRouting, siteStatusOf, type SiteStatus } from "../src/core/routing/site-status.ts";
import { AgentRegistration, AppliedReport } from "../src/core/schemas/agent-messages.ts";
import { constantTimeEqual } from "../src/edge/secrets.ts";
import { controlStub } from "./control-do.ts";
import { failure, invalid, success, type Outcome } from "./outcome.ts";

/** What the edge and the dashboard need to know about a site's liveness. */
export interface SiteHealth {
  /** False before the first heartbeat and once no heartbeat came within HEARTBEAT_TIMEOUT_S. */
  healthy: boolean;
  lastSeenMs: number | null;
  staleForMs: number | null;
  appliedPlanVersion: number | null;
}

/** A registration as stored, with when it happened. */
export type StoredRegistration = AgentRegistration & { registeredAtMs: number };

/** Everything the admin view shows about a site. */
export interface SiteInfo {
  health: SiteHealth;
  tokenIssued: boolean;
  registration: StoredRegistration | null;
  applied: AppliedReport | null;
  status: SiteStatus | null;
}

/** What the dashboard shows of a site. */
export interface SiteDashboardView {
  health: SiteHealth;
  telemetry: Telemetry | null;
  /** Measured site draw (W) when heartbeats arrived, bounded by DRAW_HISTORY_LIMITS, oldest first. */
  drawHistory: readonly ForecastPoint[];
  /** The agent's running SLO counts when heartbeats arrived, bounded by SLO_HISTORY_LIMITS, oldest first. */
  sloHistory: readonly SloSample[];
}

/** Thrown for a heartbeat that fails validation; nothing is stored. */
export class InvalidHeartbeatError extends Error {
  override name = "InvalidHeartbeatError";
}

const HeartbeatTimeoutS = z.coerce.number().positive();

/**
 * One Durable Object per GPU site (addressed by `idFromName(siteId)`): keeps the site's latest
 * telemetry and decides whether it is alive. Each heartbeat pushes the alarm to last-seen + timeout;
 * the alarm firing means no heartbeat came in time. It also holds the hash of the site's agent
 * token, the agent's registration and its last applied-plan report, and tells ControlDO when the
 * site's routing status changes (and every half timeout while alive, so the edge's last-seen
 * backstop stays fresh).
 */
export class SiteDO extends DurableObject<Env> {
  private readonly timeoutMs: number;
  private telemetry: Telemetry | null = null;
  private lastSeenMs: number | null = null;
  private timedOut = false;
  private tokenHash: string | null = null;
  private registration: StoredRegistration | null = null;
  private applied: AppliedReport | null = null;
  private forwarded: SiteStatus | null = null;
  private drawHistory: readonly ForecastPoint[] = [];
  private sloHistory: readonly SloSample[] = [];

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const timeout = HeartbeatTimeoutS.safeParse(env.HEARTBEAT_TIMEOUT_S);
    if (!timeout.success) throw new Error(`HEARTBEAT_TIMEOUT_S must be a positive number of seconds, got "${env.HEARTBEAT_TIMEOUT_S}"`);
    this.timeoutMs = timeout.data * 1000;
    void ctx.blockConcurrencyWhile(async () => {
      const stored = await ctx.storage.get(["telemetry", "lastSeenMs", "timedOut", "tokenHash", "registration", "applied", "drawHistory", "sloHistory"]);
      this.telemetry = (stored.get("telemetry") as Telemetry | undefined) ?? null;
      this.lastSeenMs = (stored.get("lastSeenMs") as number | undefined) ?? null;
      this.timedOut = stored.get("timedOut") === true;
      this.tokenHash = (stored.get("tokenHash") as string | undefined) ?? null;
      this.registration = (stored.get("registration") as StoredRegistration | undefined) ?? null;
      this.applied = (stored.get("applied") as AppliedReport | undefined) ?? null;
      this.drawHistory = (stored.get("drawHistory") as ForecastPoint[] | undefined) ?? [];
      this.sloHistory = (stored.get("sloHistory") as SloSample[] | undefined) ?? [];
    });
  }

  /**
   * Accepts a heartbeat: validates it, keeps it unless an older one arrived late, and re-arms the
   * liveness alarm. Throws `InvalidHeartbeatError` (storing nothing) on bad input or a heartbeat for
   * another site.
   */
  async heartbeat(input: unknown): Promise<SiteHealth> {
    const outcome = await this.acceptHeartbeat(input);
    if (!outcome.ok) throw new InvalidHeartbeatError(outcome.message);
    return outcome.value;
  }

  /** Like heartbeat, but bad input comes back as a 400 outcome instead of an exception. */
  async acceptHeartbeat(input: unknown): Promise<Outcome<SiteHealth>> {
    const parsed = Telemetry.safeParse(input);
    if (!parsed.success) return invalid("heartbeat", parsed.error);
    const now = Date.now();
    // A heartbeat cannot be sent after it arrived: a later stamp (a site clock ahead) is taken as the arrival
    // time, or every heartbeat after it would look older and the site's state would freeze.
    const telemetry = { ...parsed.data, sentAtMs: Math.min(parsed.data.sentAtMs, now) };
    const expected = this.ctx.id.name ?? this.telemetry?.site;
    if (expected !== undefined && telemetry.site !== expected) return failure(400, `heartbeat for site "${telemetry.site}" sent to site "${expected}"`, "site");

    const newer = this.telemetry === null || telemetry.sentAtMs >= Math.min(this.telemetry.sentAtMs, now);
    const drawHistory = newer ? appendBounded(this.drawHistory, { tMs: now, value: telemetry.sitePowerW }, DRAW_HISTORY_LIMITS) : this.drawHistory;
    const sloHistory = newer && telemetry.sloCounts ? appendBounded(this.sloHistory, { tMs: now, counts: telemetry.sloCounts }, SLO_HISTORY_LIMITS) : this.sloHistory;
    // Stored first: a heartbeat whose write fails changes nothing (the agent sends the next one).
    await this.ctx.storage.put({
      ...(newer ? { telemetry } : {}),
      ...(drawHistory !== this.drawHistory ? { drawHistory } : {}),
      ...(sloHistory !== this.sloHistory ? { sloHistory } : {}),
      lastSeenMs: now,
      timedOut: false,
    });
    if (newer) this.telemetry = telemetry;
    this.lastSeenMs = now;
    this.timedOut = false;
    this.drawHistory = drawHistory;
    this.sloHistory = sloHistory;
    await this.ctx.storage.setAlarm(now + this.timeoutMs);
    await this.forwardStatus();
    return success(this.health());
  }

  /** Liveness as of now; also false when the alarm is late but the deadline has passed. */
  health(): SiteHealth {
    const staleForMs = this.lastSeenMs === null ? null : Math.max(0, Date.now() - this.lastSeenMs);
    return {
      healthy: staleForMs !== null && !this.timedOut && staleForMs <= this.timeoutMs,
      lastSeenMs: this.lastSeenMs,
      staleForMs,
      appliedPlanVersion: this.telemetry?.appliedPlanVersion ?? null,
    };
  }

  /** The newest heartbeat received, or null before the first. */
  latestTelemetry(): Telemetry | null {
    return this.telemetry;
  }

  /** Stores the SHA-256 (hex) of the site's new agent token, replacing any previous one. */
  async setTokenHash(hash: string): Promise<void> {
    await this.ctx.storage.put("tokenHash", hash);
    this.tokenHash = hash;
  }

  /** Whether `hash` is the stored token hash, compared in constant time; false before a token is issued. */
  checkToken(hash: string): boolean {
    return this.tokenHash !== null && constantTimeEqual(this.tokenHash, hash);
  }

  /** Records the agent's registration. */
  async register(input: unknown): Promise<Outcome<StoredRegistration>> {
    const parsed = AgentRegistration.safeParse(input);
    if (!parsed.success) return invalid("registration", parsed.error);
    const registration = { ...parsed.data, registeredAtMs: Date.now() };
    await this.ctx.storage.put("registration", registration);
    this.registration = registration;
    return success(registration);
  }

  /** Records what the agent applied; a version newer than `currentPlanVersion` is a 409. */
  async reportApplied(input: unknown, currentPlanVersion: number | null): Promise<Outcome<AppliedReport>> {
    const parsed = AppliedReport.safeParse(input);
    if (!parsed.success) return invalid("applied-config report", parsed.error);
    if (currentPlanVersion === null || parsed.data.planVersion > currentPlanVersion) {
      return failure(409, `plan version ${parsed.data.planVersion} was never issued (current: ${currentPlanVersion ?? "none"})`, "planVersion");
    }
    await this.ctx.storage.put("applied", parsed.data);
    this.applied = parsed.data;
    return success(parsed.data);
  }

  /** The admin view of this site. */
  info(): SiteInfo {
    return { health: this.health(), tokenIssued: this.tokenHash !== null, registration: this.registration, applied: this.applied, status: this.forwarded };
  }

  /** The dashboard's view of this site. */
  dashboardView(): SiteDashboardView {
    return { health: this.health(), telemetry: this.telemetry, drawHistory: this.drawHistory, sloHistory: this.sloHistory };
  }

  /** Marks the site unhealthy if the deadline has passed; an early wake-up re-arms for the deadline. */
  override async alarm(): Promise<void> {
    if (this.lastSeenMs === null) return;
    const deadline = this.lastSeenMs + this.timeoutMs;
    if (Date.now() < deadline) {
      await this.ctx.storage.setAlarm(deadline);
      return;
    }
    this.timedOut = true;
    await this.ctx.storage.put("timedOut", true);
    // Routing must hear about it: if ControlDO is unreachable, try again shortly.
    if (!(await this.forwardStatus())) await this.ctx.storage.setAlarm(Date.now() + 1_000);
  }

  /**
   * Tells ControlDO about a routing-relevant change, or refreshes its last-seen time. False when
   * ControlDO could not be reached (a heartbeat retries at the next one, the alarm sooner).
   */
  private async forwardStatus(): Promise<boolean> {
    if (!this.telemetry) return true;
    const status = siteStatusOf(this.telemetry, this.health());
    const last = this.forwarded;
    const fresh = last?.lastSeenMs != null && status.lastSeenMs !== null && status.lastSeenMs - last.lastSeenMs < this.timeoutMs / 2;
    if (last && sameRouting(last, status) && fresh) return true;
    try {
      await controlStub(this.env).reportSiteStatus(status);
      this.forwarded = status;
      return true;
    } catch (error) {
      console.error(`site ${status.site}: could not report status to ControlDO`, error);
      return false;
    }
  }
}
