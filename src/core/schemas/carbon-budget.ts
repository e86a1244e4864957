import { z } from "zod";

/** A key's carbon budget: at most `gco2e` grams of CO2e per UTC day or calendar month (UTC). */
export const CarbonBudget = z.strictObject({
  gco2e: z.number().positive().max(1e12),
  period: z.enum(["day", "month"]),
});
export type CarbonBudget = z.infer<typeof CarbonBudget>;
