import { DurableObject } from "cloudflare:workers";
import { z } from "zod";
import { Telemetry } from "../src/core/schemas/telemetry.ts";

/** What the edge and the dashboard need to know about a site's liveness. */
export interface SiteHealth {
  /** False before the first heartbeat and once no heartbeat came within HEARTBEAT_TIMEOUT_S. */
  healthy: boolean;
  lastSeenMs: number | null;
  staleForMs: number | null;
  appliedPlanVersion: number | null;
}

/** Thrown for a heartbeat that fails validation; nothing is stored. */
export class InvalidHeartbeatError extends Error {
  override name = "InvalidHeartbeatError";
}

const HeartbeatTimeoutS = z.coerce.number().positive();

/**
 * One Durable Object per GPU site (addressed by `idFromName(siteId)`): keeps the site's latest
 * telemetry and decides whether it is alive. Each heartbeat pushes the alarm to last-seen + timeout;
 * the alarm firing means no heartbeat came in time.
 */
export class SiteDO extends DurableObject<Env> {
  private readonly timeoutMs: number;
  private telemetry: Telemetry | null = null;
  private lastSeenMs: number | null = null;
  private timedOut = false;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const timeout = HeartbeatTimeoutS.safeParse(env.HEARTBEAT_TIMEOUT_S);
    if (!timeout.success) throw new Error(`HEARTBEAT_TIMEOUT_S must be a positive number of seconds, got "${env.HEARTBEAT_TIMEOUT_S}"`);
    this.timeoutMs = timeout.data * 1000;
    void ctx.blockConcurrencyWhile(async () => {
      const stored = await ctx.storage.get(["telemetry", "lastSeenMs", "timedOut"]);
      this.telemetry = (stored.get("telemetry") as Telemetry | undefined) ?? null;
      this.lastSeenMs = (stored.get("lastSeenMs") as number | undefined) ?? null;
      this.timedOut = stored.get("timedOut") === true;
    });
  }

  /**
   * Accepts a heartbeat: validates it, keeps it unless an older one arrived late, and re-arms the
   * liveness alarm. Throws `InvalidHeartbeatError` (storing nothing) on bad input or a heartbeat for
   * another site.
   */
  async heartbeat(input: unknown): Promise<SiteHealth> {
    const parsed = Telemetry.safeParse(input);
    if (!parsed.success) throw new InvalidHeartbeatError(`invalid heartbeat: ${z.prettifyError(parsed.error)}`);
    const telemetry = parsed.data;
    const expected = this.ctx.id.name ?? this.telemetry?.site;
    if (expected !== undefined && telemetry.site !== expected) throw new InvalidHeartbeatError(`heartbeat for site "${telemetry.site}" sent to site "${expected}"`);

    const now = Date.now();
    const newer = this.telemetry === null || telemetry.sentAtMs >= this.telemetry.sentAtMs;
    if (newer) this.telemetry = telemetry;
    this.lastSeenMs = now;
    this.timedOut = false;
    await this.ctx.storage.put({ ...(newer ? { telemetry } : {}), lastSeenMs: now, timedOut: false });
    await this.ctx.storage.setAlarm(now + this.timeoutMs);
    return this.health();
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
  }
}
