/**
 * Provider settings the adapters read from the Worker's environment. Keys and passwords are
 * secrets (`wrangler secret put ELECTRICITYMAPS_TOKEN`, locally `.dev.vars`); base URLs are
 * optional vars that default to the public APIs (tests point them at a local server).
 */
export interface ForecastEnv {
  ELECTRICITYMAPS_TOKEN?: string;
  ELECTRICITYMAPS_API_URL?: string;
  WATTTIME_USERNAME?: string;
  WATTTIME_PASSWORD?: string;
  WATTTIME_API_URL?: string;
  UK_CARBON_INTENSITY_API_URL?: string;
  /** Replay offset in ms (series time = wall time - offset); whole weeks aligned to the series when unset. */
  REPLAY_OFFSET_MS?: string;
  /** Per-request provider timeout in ms (default 10 s). */
  FORECAST_TIMEOUT_MS?: string;
}

/** The public API roots, used when the env names none. */
export const DEFAULT_API_URLS = {
  electricitymaps: "https://api.electricitymap.org",
  watttime: "https://api.watttime.org",
  ukCarbonIntensity: "https://api.carbonintensity.org.uk",
} as const;

/** A positive number from an env string, or undefined. */
export function envNumber(value: string | undefined): number | undefined {
  if (value === undefined || value.trim() === "") return undefined;
  const n = Number(value);
  return Number.isFinite(n) ? n : undefined;
}
