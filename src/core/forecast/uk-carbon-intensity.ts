import { z } from "zod";
import type { Forecast } from "../schemas/forecast.ts";
import type { ParseContext } from "./electricity-maps.ts";
import { checkedForecast, cleanPoints, IsoInstant } from "./forecast-points.ts";
import { parseResponse } from "./forecast-source-error.ts";

export const UK_CARBON_INTENSITY = "uk-carbon-intensity";

/** One half hour: forecast (and, for the national series, actual) intensity in gCO2/kWh. */
const HalfHour = z.object({
  from: IsoInstant,
  to: IsoInstant.optional(),
  intensity: z.object({ forecast: z.number().nullable(), actual: z.number().nullish(), index: z.string().optional() }),
});

/** `GET /intensity/{from}/fw48h`: national half-hourly intensity. */
export const UkNationalResponse = z.object({ data: z.array(HalfHour).min(1) });

const Region = z.object({ regionid: z.number().int(), shortname: z.string().optional(), data: z.array(HalfHour).min(1) });

/**
 * `GET /regional/intensity/{from}/fw48h/regionid/{id}`: one region's half hours. The API wraps the
 * region in `data`, as an object or as a one-element array depending on the endpoint; both are read.
 */
export const UkRegionalResponse = z.object({ data: z.union([Region, z.array(Region).min(1)]) });

/**
 * A UK Carbon Intensity series (average intensity; the measured `actual` where given, else the
 * forecast). `regional` selects the regional response shape.
 *
 * @example
 * parseUkCarbonIntensity(json, { subject: { kind: "site", id: "uk-1" }, nowMs }, { regional: true });
 */
export function parseUkCarbonIntensity(json: unknown, ctx: ParseContext, options: { regional: boolean }): Forecast {
  let halfHours: z.infer<typeof HalfHour>[];
  if (options.regional) {
    const { data } = parseResponse(UK_CARBON_INTENSITY, UkRegionalResponse, json);
    halfHours = (Array.isArray(data) ? data[0]! : data).data;
  } else {
    halfHours = parseResponse(UK_CARBON_INTENSITY, UkNationalResponse, json).data;
  }
  return checkedForecast(UK_CARBON_INTENSITY, {
    kind: "carbon_average",
    unit: "gCO2/kWh",
    source: UK_CARBON_INTENSITY,
    issuedAtMs: ctx.nowMs,
    subject: ctx.subject,
    points: cleanPoints(UK_CARBON_INTENSITY, halfHours.map((h) => ({ tMs: h.from, value: h.intensity.actual ?? h.intensity.forecast }))),
  });
}

/** The API's `{from}` path segment: an instant as `YYYY-MM-DDThh:mmZ`. */
export function ukFromSegment(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 16)}Z`;
}
