import type { ParseContext } from "../core/forecast/electricity-maps.ts";
import { parseUkCarbonIntensity, UK_CARBON_INTENSITY, ukFromSegment } from "../core/forecast/uk-carbon-intensity.ts";
import type { Forecast } from "../core/schemas/forecast.ts";
import { getJson, joinUrl, type HttpOptions } from "./http.ts";

/**
 * UK Carbon Intensity (no key): the next 48 hours from now, half-hourly, for a region
 * (`/regional/intensity/{from}/fw48h/regionid/{id}`) or nationally (`/intensity/{from}/fw48h`).
 *
 * @example
 * await fetchUkCarbonIntensity(13, { subject, nowMs }, "https://api.carbonintensity.org.uk", { fetch, timeoutMs: 10_000 });
 */
export async function fetchUkCarbonIntensity(regionId: number | undefined, ctx: ParseContext, baseUrl: string, http: HttpOptions): Promise<Forecast> {
  const from = ukFromSegment(ctx.nowMs);
  const path = regionId === undefined ? `/intensity/${from}/fw48h` : `/regional/intensity/${from}/fw48h/regionid/${regionId}`;
  const json = await getJson(UK_CARBON_INTENSITY, joinUrl(baseUrl, path), {}, http);
  return parseUkCarbonIntensity(json, ctx, { regional: regionId !== undefined });
}
