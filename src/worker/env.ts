/**
 * The Worker's environment: the generated `Env` (wrangler.toml bindings and vars) plus secrets,
 * which `wrangler types` only sees in a local `.dev.vars`. Set them with `wrangler secret put`.
 */
export type EdgeEnv = Env & {
  /** Bearer token of the admin API and /metrics; both answer 401 while it is unset. */
  ADMIN_TOKEN?: string;
};

/** HEARTBEAT_TIMEOUT_S in milliseconds (SiteDO validates the value; 10 s if it is not a positive number). */
export function heartbeatTimeoutMs(env: Env): number {
  const s = Number(env.HEARTBEAT_TIMEOUT_S);
  return Number.isFinite(s) && s > 0 ? s * 1000 : 10_000;
}

/** POWER_FORECAST_MAX_AGE_S in milliseconds: a site's power forecast older than this is stale (undefined, the planner's default, if it is not a positive number). */
export function powerForecastMaxAgeMs(env: Env): number | undefined {
  const s = Number(env.POWER_FORECAST_MAX_AGE_S);
  return Number.isFinite(s) && s > 0 ? s * 1000 : undefined;
}
