import { z } from "zod";
import { ForecastPoint, ForecastUnit } from "./forecast.ts";

/**
 * One turbine's power curve: (hub-height wind speed m/s, output kW) points with speeds increasing,
 * read linearly between points; below the first speed (cut-in) and above the last (cut-out) it
 * gives nothing. Take it from the turbine's data sheet.
 */
export const TurbinePowerCurve = z
  .array(z.tuple([z.number().nonnegative(), z.number().nonnegative()]))
  .min(2)
  .max(200)
  .superRefine((points, ctx) => {
    points.forEach(([speed], i) => {
      if (i > 0 && speed <= points[i - 1]![0]) ctx.addIssue({ code: "custom", message: "wind speeds must strictly increase", path: [i, 0] });
    });
  });
export type TurbinePowerCurve = z.infer<typeof TurbinePowerCurve>;

/** Heights Open-Meteo's forecast API gives wind speed at, m. */
export const OPEN_METEO_HEIGHTS_M = [10, 80, 120, 180] as const;

/**
 * Where a site's host agent gets the power forecast it pushes to the edge: an operator file it
 * rereads before every push, or Open-Meteo's wind-speed forecast at the farm turned into power
 * through the turbine's power curve and the farm's size.
 */
export const SitePowerForecastSource = z.discriminatedUnion("kind", [
  z.object({
    kind: z.literal("file"),
    /** JSON: an OperatorPowerForecast. Relative paths are read from the source file's folder. */
    path: z.string().min(1),
  }),
  z.object({
    kind: z.literal("open-meteo"),
    latitude: z.number().min(-90).max(90),
    longitude: z.number().min(-180).max(180),
    /** The forecast height nearest the turbines' hub. */
    heightM: z.literal(OPEN_METEO_HEIGHTS_M).default(120),
    turbines: z.number().int().positive().max(10_000),
    curve: TurbinePowerCurve,
    /** Share of the turbines' output that reaches the site (wake, electrical losses, availability). */
    efficiency: z.number().positive().max(1).default(1),
    /** The farm's grid export or the site's connection limit, W; the forecast never exceeds it. */
    capW: z.number().positive().optional(),
    forecastHours: z.number().int().min(1).max(384).default(48),
    baseUrl: z.url({ protocol: /^https?$/ }).default("https://api.open-meteo.com"),
  }),
]);
export type SitePowerForecastSource = z.infer<typeof SitePowerForecastSource>;

/** The operator's power forecast file: the power the site can draw, per instant, in W or MW. */
export const OperatorPowerForecast = z.object({
  unit: ForecastUnit.extract(["W", "MW"]),
  points: z.array(ForecastPoint).min(1).max(10_000),
});
export type OperatorPowerForecast = z.infer<typeof OperatorPowerForecast>;
