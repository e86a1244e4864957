import { readFile } from "node:fs/promises";
import { basename, dirname, resolve } from "node:path";
import { checkedForecast } from "../../src/core/forecast/forecast-points.ts";
import { ForecastSourceError, parseResponse } from "../../src/core/forecast/forecast-source-error.ts";
import { OPEN_METEO, openMeteoWindQuery, parseOpenMeteoWind } from "../../src/core/forecast/open-meteo.ts";
import { farmPowerW } from "../../src/core/forecast/wind-power.ts";
import type { Forecast } from "../../src/core/schemas/forecast.ts";
import { OperatorPowerForecast, SitePowerForecastSource } from "../../src/core/schemas/site-power-forecast.ts";
import { DEFAULT_TIMEOUT_MS, getJson, joinUrl, type FetchFn } from "../../src/forecast-adapters/http.ts";

/** Largest source or operator file the agent reads. */
const MAX_FILE_BYTES = 4 * 1024 * 1024;

export interface PowerForecastDeps {
  fetch?: FetchFn;
  nowMs?: () => number;
  timeoutMs?: number;
}

/**
 * The site's power forecast as the agent pushes it (`power_available` about the site), from the
 * source file `sourcePath` (a SitePowerForecastSource, reread each time so the operator can change
 * it): the operator's own forecast file, or Open-Meteo's hourly wind speed at the farm through the
 * turbine's power curve and the farm's size. Failures are ForecastSourceErrors naming the source.
 *
 * @example
 * const forecast = await sitePowerForecast("wind-a", "/etc/greenference/power-forecast.json");
 */
export async function sitePowerForecast(site: string, sourcePath: string, deps: PowerForecastDeps = {}): Promise<Forecast> {
  const nowMs = (deps.nowMs ?? Date.now)();
  const source = parseResponse("power-forecast", SitePowerForecastSource, await readJson("power-forecast", sourcePath));
  const about = { kind: "power_available" as const, issuedAtMs: nowMs, subject: { kind: "site" as const, id: site } };
  if (source.kind === "file") {
    const path = resolve(dirname(sourcePath), source.path);
    const name = `operator:${basename(path)}`;
    const file = parseResponse(name, OperatorPowerForecast, await readJson(name, path));
    return checkedForecast(name, { ...about, unit: file.unit, source: name, points: file.points });
  }
  const json = await getJson(OPEN_METEO, joinUrl(source.baseUrl, openMeteoWindQuery(source)), {}, { fetch: deps.fetch ?? fetch, timeoutMs: deps.timeoutMs ?? DEFAULT_TIMEOUT_MS });
  const points = farmPowerW(source, parseOpenMeteoWind(json, source.heightM));
  return checkedForecast(OPEN_METEO, { ...about, unit: "W", source: `${OPEN_METEO}:wind_speed_${source.heightM}m x ${source.turbines} turbines`, points });
}

async function readJson(source: string, path: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    throw new ForecastSourceError(source, "config", `cannot read ${path}: ${(error as Error).message}`);
  }
  if (text.length > MAX_FILE_BYTES) throw new ForecastSourceError(source, "config", `${path} is larger than ${MAX_FILE_BYTES} bytes`);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ForecastSourceError(source, "config", `${path} is not JSON`);
  }
}
