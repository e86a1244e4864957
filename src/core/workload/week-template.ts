import { z } from "zod";

const DAY_S = 86_400;
export const WEEK_S = 7 * DAY_S;
/** Share of a weekday's peak that remains at night before the exponent shapes it (keeps weekend nights lowest). */
const NIGHT_SHARE = 0.2;

/**
 * Peak-to-average and peak-to-valley load ratios reported by DynamoLLM (Sec. II, Fig. 2) for its
 * one-week Azure traces; weekend factors are our reading of its Fig. 2 ("much lower load during
 * weekends" for coding, "less extreme" for conversation).
 */
export const WORKLOAD_SHAPES = {
  conversation: { peakToAverage: 1.7, peakToValley: 3.3, weekendFactor: 0.8 },
  coding: { peakToAverage: 2.8, peakToValley: 34.6, weekendFactor: 0.4 },
} as const;

export const WeekTemplateOptions = z
  .object({
    label: z.string().min(1).default("custom"),
    meanRatePerS: z.number().positive(),
    peakToAverage: z.number().gt(1),
    peakToValley: z.number().gt(1),
    /** Slot length; must divide a day. */
    slotS: z.number().int().positive().default(900).refine((s) => DAY_S % s === 0, "slotS must divide 86400"),
    /** Weekend day peaks relative to weekday peaks. */
    weekendFactor: z.number().gt(0).max(1).default(0.75),
    /** Hour of day (0-24, template time) of the daily peak. */
    peakHour: z.number().min(0).lt(24).default(14),
  })
  .refine((o) => o.peakToValley > o.peakToAverage, { message: "peakToValley must exceed peakToAverage", path: ["peakToValley"] });
export type WeekTemplateOptions = z.input<typeof WeekTemplateOptions>;

/** A synthetic week of request rates, piecewise constant per slot; slot 0 starts Monday 00:00. */
export interface RateTemplate {
  synthetic: true;
  name: string;
  slotS: number;
  ratesPerS: number[];
  meanRatePerS: number;
  peakRatePerS: number;
  valleyRatePerS: number;
  /** Exponent applied to the base shape so that the mean lands where the ratios require. */
  shapeExponent: number;
}

/**
 * Builds a week of per-slot rates: a raised-cosine day (peak at `peakHour`) scaled down on Saturday
 * and Sunday, normalised to [0, 1], raised to the power p that gives the required mean, then mapped
 * so that, over the slots, max / mean = peakToAverage and max / min = peakToValley exactly and the
 * mean is `meanRatePerS`.
 *
 * @example
 * const t = weekRateTemplate({ ...WORKLOAD_SHAPES.conversation, label: "conversation", meanRatePerS: 5 });
 * t.ratesPerS.length; // 672 slots of 15 minutes
 */
export function weekRateTemplate(options: WeekTemplateOptions): RateTemplate {
  const o = WeekTemplateOptions.parse(options);
  const slots = WEEK_S / o.slotS;
  const base = Array.from({ length: slots }, (_, i) => {
    const t = (i + 0.5) * o.slotS;
    const day = Math.floor(t / DAY_S);
    const hour = (t % DAY_S) / 3600;
    const diurnal = 0.5 + 0.5 * Math.cos((2 * Math.PI * (hour - o.peakHour)) / 24);
    return (day >= 5 ? o.weekendFactor : 1) * (NIGHT_SHARE + (1 - NIGHT_SHARE) * diurnal);
  });
  const lo = base.reduce((a, b) => Math.min(a, b));
  const hi = base.reduce((a, b) => Math.max(a, b));
  const shape = base.map((b) => (b - lo) / (hi - lo));
  // With r = peak * (v + (1 - v) * h), v = 1 / peakToValley: mean(r) = peak / peakToAverage needs mean(h) = target.
  const v = 1 / o.peakToValley;
  const target = (1 / o.peakToAverage - v) / (1 - v);
  const p = exponentForMean(shape, target);
  const peak = o.meanRatePerS * o.peakToAverage;
  const ratesPerS = shape.map((h) => peak * (v + (1 - v) * h ** p));
  return {
    synthetic: true,
    name: `synthetic-week:${o.label}`,
    slotS: o.slotS,
    ratesPerS,
    meanRatePerS: o.meanRatePerS,
    peakRatePerS: peak,
    valleyRatePerS: peak * v,
    shapeExponent: p,
  };
}

/** Rate at time `tS` seconds after the template's start (the week repeats). */
export function rateAt(template: RateTemplate, tS: number): number {
  const slot = Math.floor((((tS % WEEK_S) + WEEK_S) % WEEK_S) / template.slotS);
  return template.ratesPerS[slot]!;
}

/** Finds p with mean(shape^p) = target by bisection on log p; mean(shape^p) falls as p grows. */
function exponentForMean(shape: number[], target: number): number {
  const meanPow = (p: number) => shape.reduce((sum, h) => sum + h ** p, 0) / shape.length;
  let lo = -30;
  let hi = 30;
  if (!(meanPow(Math.exp(hi)) < target && target < meanPow(Math.exp(lo)))) {
    throw new Error(`the weekly shape cannot reach a normalised mean of ${target.toFixed(4)}; choose other ratios`);
  }
  for (let i = 0; i < 200 && hi - lo > 1e-15; i++) {
    const mid = (lo + hi) / 2;
    if (meanPow(Math.exp(mid)) > target) lo = mid;
    else hi = mid;
  }
  return Math.exp((lo + hi) / 2);
}
