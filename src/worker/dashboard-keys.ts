import type { IRequest, RouterType } from "itty-router";
import { carbonLedger } from "../../durable-objects/carbon-ledger-do.ts";
import { controlStub } from "../../durable-objects/control-do.ts";
import { budgetPeriod } from "../core/budget/carbon-pacing.ts";
import { dashboardAccess } from "./dashboard-api.ts";
import type { EdgeEnv } from "../edge/env.ts";
import type { EdgeContext } from "./inference.ts";

/** Keys the view shows (those with a budget first, then by creation); each costs one ledger call. */
export const KEYS_SHOWN = 100;

/** One API key's carbon on the dashboard: its budget and where its period stands, and today's spend. */
export interface KeyCarbonView {
  id: string;
  name: string;
  budget: { gco2e: number; period: "day" | "month" } | null;
  /** The current budget period: spend, pace (spend over an even pace), carbon price, exhausted; null without a budget. */
  period: { spentG: number; pace: number; price: number; exhausted: boolean; endsAtMs: number } | null;
  /** This UTC day's receipts. */
  todayG: number;
}

/**
 * `GET /dashboard/v1/keys`: per API key its carbon budget and spend (from its CarbonLedgerDO), for
 * the dashboard's key table. The same readers as the dashboard's state: the read-only dashboard
 * token or the admin token (or anyone with DASHBOARD_ACCESS "public"); it changes nothing.
 */
export function addDashboardKeyRoutes(router: RouterType, edge: EdgeContext): void {
  router.get("/dashboard/v1/keys", async (request: IRequest, env: EdgeEnv) => {
    const access = await dashboardAccess(request, env);
    if (access instanceof Response) return access;
    const nowMs = edge.now();
    const keys = (await controlStub(env).listApiKeys()).sort((a, b) => Number(b.carbonBudget !== null) - Number(a.carbonBudget !== null) || a.createdAtMs - b.createdAtMs);
    const shown = await Promise.all(keys.slice(0, KEYS_SHOWN).map(async (k): Promise<KeyCarbonView> => {
      const ledger = carbonLedger(env, k.id);
      const budget = k.carbonBudget;
      const pace = budget ? await ledger.pace(budget, nowMs) : null;
      const period = budget && pace ? { spentG: pace.spentG, pace: pace.pace, price: pace.price, exhausted: pace.exhausted, endsAtMs: budgetPeriod(budget.period, nowMs).endMs } : null;
      return { id: k.id, name: k.name, budget: budget ? { gco2e: budget.gco2e, period: budget.period } : null, period, todayG: await ledger.spentIn("day", nowMs) };
    }));
    return Response.json({ generatedAtMs: nowMs, keys: shown, notShown: Math.max(0, keys.length - KEYS_SHOWN) }, { headers: { "cache-control": "no-store" } });
  });
}
