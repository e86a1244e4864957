import { z } from "zod";
import { ClassId, EpochMs, SiteId } from "./ids.ts";

export const ForecastKind = z.enum(["carbon_average", "carbon_marginal", "power_available", "load"]);
export type ForecastKind = z.infer<typeof ForecastKind>;

export const ForecastUnit = z.enum(["gCO2/kWh", "W", "MW", "req/s"]);
export type ForecastUnit = z.infer<typeof ForecastUnit>;

/** The units each kind may be given in. */
export const UNITS_OF_KIND = {
  carbon_average: ["gCO2/kWh"],
  carbon_marginal: ["gCO2/kWh"],
  power_available: ["W", "MW"],
  load: ["req/s"],
} as const satisfies Record<ForecastKind, readonly ForecastUnit[]>;

/** What a series is about: power per site, carbon per site or grid region, load per class. */
export const ForecastSubject = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("site"), id: SiteId }),
  z.object({ kind: z.literal("region"), id: z.string().min(1) }),
  z.object({ kind: z.literal("class"), id: ClassId }),
]);
export type ForecastSubject = z.infer<typeof ForecastSubject>;

/** The subjects each kind may be about. */
export const SUBJECTS_OF_KIND = {
  carbon_average: ["site", "region"],
  carbon_marginal: ["site", "region"],
  power_available: ["site"],
  load: ["class"],
} as const satisfies Record<ForecastKind, readonly ForecastSubject["kind"][]>;

export const ForecastPoint = z.object({ tMs: EpochMs, value: z.number() });
export type ForecastPoint = z.infer<typeof ForecastPoint>;

/**
 * A time series from one source, issued at one time. A source that failed is replaced by a
 * persistence forecast that says so (`fallback: true` and why). Only marginal carbon may be
 * negative (FREESH: curtailed renewables at the margin).
 *
 * @example
 * Forecast.parse({ kind: "carbon_average", unit: "gCO2/kWh", source: "electricitymaps",
 *   issuedAtMs: 0, subject: { kind: "region", id: "DE" }, points: [{ tMs: 0, value: 312 }] });
 */
export const Forecast = z
  .object({
    kind: ForecastKind,
    unit: ForecastUnit,
    /** e.g. "electricitymaps", "watttime", "replay:wind.csv", "persistence". */
    source: z.string().min(1),
    issuedAtMs: EpochMs,
    subject: ForecastSubject,
    points: z.array(ForecastPoint).min(1),
    fallback: z.literal(true).optional(),
    fallbackReason: z.string().min(1).optional(),
  })
  .superRefine((f, ctx) => {
    const units: readonly ForecastUnit[] = UNITS_OF_KIND[f.kind];
    if (!units.includes(f.unit)) ctx.addIssue({ code: "custom", message: `${f.kind} is given in ${units.join(" or ")}, not ${f.unit}`, path: ["unit"] });
    const subjects: readonly ForecastSubject["kind"][] = SUBJECTS_OF_KIND[f.kind];
    if (!subjects.includes(f.subject.kind)) ctx.addIssue({ code: "custom", message: `${f.kind} is about a ${subjects.join(" or ")}`, path: ["subject", "kind"] });
    if (f.fallback && !f.fallbackReason) ctx.addIssue({ code: "custom", message: "a fallback forecast must say why", path: ["fallbackReason"] });
    if (!f.fallback && f.fallbackReason) ctx.addIssue({ code: "custom", message: "fallbackReason without fallback: true", path: ["fallback"] });
    f.points.forEach((p, i) => {
      const prev = f.points[i - 1];
      if (prev && p.tMs <= prev.tMs) ctx.addIssue({ code: "custom", message: "times must strictly increase", path: ["points", i, "tMs"] });
      if (p.value < 0 && f.kind !== "carbon_marginal") ctx.addIssue({ code: "custom", message: `${f.kind} cannot be negative`, path: ["points", i, "value"] });
    });
  });
export type Forecast = z.infer<typeof Forecast>;
