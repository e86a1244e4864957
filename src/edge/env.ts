/**
 * The Worker's environment: the generated `Env` (wrangler.toml bindings and vars) plus secrets,
 * which `wrangler types` only sees in a local `.dev.vars`. Set them with `wrangler secret put`.
 */
export type EdgeEnv = Env & {
  /** Bearer token of the admin API and /metrics; both answer 401 while it is unset. */
  ADMIN_TOKEN?: string;
  /** Read-only bearer token: the dashboard's state and /metrics, nothing that changes anything. */
  DASHBOARD_TOKEN?: string;
};

/** HEARTBEAT_TIMEOUT_S in milliseconds (SiteDO validates the value; 10 s if it is not a positive number). */
export function heartbeatTimeoutMs(env: Env): number {
  const s = Number(env.HEARTBEAT_TIMEOUT_S);
  return Number.isFinite(s) && s > 0 ? s * 1000 : 10_000;
}

/** SITE_IDLE_TIMEOUT_S in milliseconds, or `fallbackMs` when it is unset or not a positive number. */
export function siteIdleTimeoutMs(env: Env, fallbackMs: number): number {
  const s = Number(env.SITE_IDLE_TIMEOUT_S);
  return Number.isFinite(s) && s > 0 ? s * 1000 : fallbackMs;
}

/** REQUEST_BODY_IDLE_TIMEOUT_S in milliseconds: how long a request body may go without a byte (10 s when unset or not a positive number). */
export function bodyIdleTimeoutMs(env: Env): number {
  const s = Number(env.REQUEST_BODY_IDLE_TIMEOUT_S);
  return Number.isFinite(s) && s > 0 ? s * 1000 : 10_000;
}

/** POWER_FORECAST_MAX_AGE_S in milliseconds: a site's power forecast older than this is stale (undefined, the planner's default, if it is not a positive number). */
export function powerForecastMaxAgeMs(env: Env): number | undefined {
  const s = Number(env.POWER_FORECAST_MAX_AGE_S);
  return Number.isFinite(s) && s > 0 ? s * 1000 : undefined;
}

/** SITE_FAILURE_HOLD_S in milliseconds: how long routing passes over a site that failed a request (10 s when unset or not a positive number). */
export function siteFailureHoldMs(env: Env): number {
  const s = Number(env.SITE_FAILURE_HOLD_S);
  return Number.isFinite(s) && s > 0 ? s * 1000 : 10_000;
}
