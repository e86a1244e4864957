import { DurableObject } from "cloudflare:workers";
import { budgetPeriod, carbonPace, type CarbonPace } from "../src/core/budget/carbon-pacing.ts";
import type { CarbonBudget } from "../src/core/schemas/carbon-budget.ts";

/** One UTC day of a key's receipts. */
export interface CarbonDay {
  date: string;
  gco2e: number;
  requests: number;
}

/** Days of receipts kept per key (a month's budget needs 31; the rest is history for GET /v1/usage/carbon). */
const KEPT_DAYS = 400;
const DAY_MS = 86_400_000;

const dateOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/**
 * A key's carbon spend: one object per API key (`idFromName(keyId)`) summing its receipts
 * (interactive and batch) per UTC day, in storage so an evicted object keeps its totals. The edge
 * records each answered request's gCO2e here and, for a key with a budget, asks for its pace
 * before routing.
 */
export class CarbonLedgerDO extends DurableObject<Env> {
  private days: Map<string, CarbonDay> | undefined;

  private async load(): Promise<Map<string, CarbonDay>> {
    if (!this.days) {
      this.days = new Map();
      for (const [, day] of await this.ctx.storage.list<CarbonDay>({ prefix: "day:" })) this.days.set(day.date, day);
    }
    return this.days;
  }

  /** Adds one request's receipt to its day; prunes days older than KEPT_DAYS. */
  async record(gco2e: number, nowMs: number): Promise<void> {
    if (!Number.isFinite(gco2e) || gco2e < 0) return;
    const days = await this.load();
    const date = dateOf(nowMs);
    const day = days.get(date) ?? { date, gco2e: 0, requests: 0 };
    day.gco2e += gco2e;
    day.requests += 1;
    days.set(date, day);
    await this.ctx.storage.put(`day:${date}`, day);
    if (days.size > KEPT_DAYS) {
      const oldest = [...days.keys()].sort().slice(0, days.size - KEPT_DAYS);
      for (const d of oldest) days.delete(d);
      await this.ctx.storage.delete(oldest.map((d) => `day:${d}`));
    }
  }

  /** The key's pace against `budget` now. */
  async pace(budget: CarbonBudget, nowMs: number): Promise<CarbonPace> {
    return carbonPace(budget, await this.spentIn(budget.period, nowMs), nowMs);
  }

  /** Spend in the current period of `period` (UTC days of it so far). */
  async spentIn(period: CarbonBudget["period"], nowMs: number): Promise<number> {
    const days = await this.load();
    const { startMs } = budgetPeriod(period, nowMs);
    let total = 0;
    for (let t = startMs; t <= nowMs; t += DAY_MS) total += days.get(dateOf(t))?.gco2e ?? 0;
    return total;
  }

  /** The last `count` days with receipts, newest first. */
  async recentDays(count: number): Promise<CarbonDay[]> {
    const days = await this.load();
    return [...days.values()].sort((a, b) => (a.date < b.date ? 1 : -1)).slice(0, count);
  }
}

export const carbonLedger = (env: Env, keyId: string) => env.CARBON_LEDGER.get(env.CARBON_LEDGER.idFromName(keyId));
