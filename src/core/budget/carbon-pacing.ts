import type { CarbonBudget } from "../schemas/carbon-budget.ts";

/** The UTC period a budget counts over that contains `nowMs`: [startMs, endMs). */
export function budgetPeriod(period: CarbonBudget["period"], nowMs: number): { startMs: number; endMs: number } {
  const d = new Date(nowMs);
  if (period === "day") {
    const startMs = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
    return { startMs, endMs: startMs + 86_400_000 };
  }
  return { startMs: Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1), endMs: Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) };
}

/** Where a key stands against its budget. */
export interface CarbonPace {
  spentG: number;
  budgetG: number;
  /** Spend over what an even pace would have spent by now (1 = on pace; the first hour of a day counts as elapsed, so a period's first requests do not count as overspend). */
  pace: number;
  /**
   * The carbon price the key's requests now pay: 0 on or under pace, then rising with the
   * overspend (pace - 1), as the dual price of a budget constraint in online primal-dual control.
   */
  price: number;
  exhausted: boolean;
  /** Seconds until the period ends (when an exhausted budget refills). */
  retryAfterS: number;
}

/** Time counted as elapsed at least, so the first requests of a period are not priced as overspend. */
const MIN_ELAPSED_MS = 3_600_000;

export function carbonPace(budget: CarbonBudget, spentG: number, nowMs: number): CarbonPace {
  const { startMs, endMs } = budgetPeriod(budget.period, nowMs);
  const elapsed = Math.max(MIN_ELAPSED_MS, nowMs - startMs) / (endMs - startMs);
  const pace = spentG / (budget.gco2e * Math.min(1, elapsed));
  return {
    spentG,
    budgetG: budget.gco2e,
    pace,
    price: Math.max(0, pace - 1),
    exhausted: spentG >= budget.gco2e,
    retryAfterS: Math.max(1, Math.ceil((endMs - nowMs) / 1000)),
  };
}

/**
 * The sites a key paying `price` is steered away from: a site's cost to the key is its carbon
 * intensity times (1 + price), against the cleanest site's at no premium; a site stays eligible
 * while intensity * price <= cleanest, i.e. intensity <= cleanest * (1 + 1/price). At price 0
 * nothing is left out; as the price rises only sites ever closer to the cleanest remain.
 */
export function sitesPricedOut(sites: readonly { id: string; gPerKwh: number }[], price: number): Set<string> {
  if (!(price > 0) || sites.length === 0) return new Set();
  const cleanest = Math.min(...sites.map((s) => s.gPerKwh));
  const ceiling = cleanest * (1 + 1 / price);
  return new Set(sites.filter((s) => s.gPerKwh > ceiling).map((s) => s.id));
}
