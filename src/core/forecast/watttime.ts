import { z } from "zod";
import type { Forecast } from "../schemas/forecast.ts";
import type { ParseContext } from "./electricity-maps.ts";
import { checkedForecast, cleanPoints, IsoInstant } from "./forecast-points.ts";
import { ForecastSourceError, parseResponse } from "./forecast-source-error.ts";

export const WATTTIME = "watttime";

/** gCO2/kWh per lb/MWh: 453.592 g per lb over 1000 kWh per MWh. */
export const G_PER_KWH_PER_LB_PER_MWH = 0.453592;

/** `GET /login` (HTTP basic auth): a bearer token valid for 30 minutes. */
export const WattTimeLoginResponse = z.object({ token: z.string().min(1) });

/**
 * `GET /v3/forecast?region=...&signal_type=co2_moer`: marginal operating emissions rate points
 * (5-minute steps, lbs CO2 per MWh) and metadata. Unknown fields are ignored.
 */
export const WattTimeForecastResponse = z.object({
  data: z.array(z.object({ point_time: IsoInstant, value: z.number().nullable() })).min(1),
  meta: z
    .object({
      region: z.string().optional(),
      signal_type: z.string().optional(),
      units: z.string().optional(),
      generated_at: IsoInstant.optional(),
      data_point_period_seconds: z.number().optional(),
    })
    .default({}),
});
export type WattTimeForecastResponse = z.infer<typeof WattTimeForecastResponse>;

/**
 * A WattTime MOER forecast in gCO2/kWh (marginal; it may be negative where curtailed renewables
 * are at the margin). Units other than lbs/MWh (a plan without MOER access gets a percentile) and
 * a signal other than co2_moer are schema failures.
 *
 * @example
 * parseWattTime(json, { subject: { kind: "site", id: "caiso-1" }, nowMs }).points[0].value; // g/kWh
 */
export function parseWattTime(json: unknown, ctx: ParseContext): Forecast {
  const response = parseResponse(WATTTIME, WattTimeForecastResponse, json);
  const units = response.meta.units ?? "lbs_co2_per_mwh";
  if (units !== "lbs_co2_per_mwh") throw new ForecastSourceError(WATTTIME, "schema", `units "${units}" are not lbs_co2_per_mwh at meta.units`);
  const signal = response.meta.signal_type ?? "co2_moer";
  if (signal !== "co2_moer") throw new ForecastSourceError(WATTTIME, "schema", `signal_type "${signal}" is not co2_moer at meta.signal_type`);
  const raw = response.data.map((p) => ({ tMs: p.point_time, value: p.value === null ? null : p.value * G_PER_KWH_PER_LB_PER_MWH }));
  return checkedForecast(WATTTIME, {
    kind: "carbon_marginal",
    unit: "gCO2/kWh",
    source: WATTTIME,
    issuedAtMs: Math.min(response.meta.generated_at ?? ctx.nowMs, ctx.nowMs),
    subject: ctx.subject,
    points: cleanPoints(WATTTIME, raw),
  });
}
