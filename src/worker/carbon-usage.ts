import { carbonLedger } from "../../durable-objects/carbon-ledger-do.ts";
import { budgetPeriod } from "../core/budget/carbon-pacing.ts";
import { authenticateCaller } from "./auth.ts";
import type { EdgeContext } from "./inference.ts";
import { openAiError } from "./openai-error.ts";

const MAX_DAYS = 400;

/**
 * `GET /v1/usage/carbon[?days=N]`: the calling key's carbon, from its receipts (interactive and
 * batch): its budget and where the current period stands against it (spend, pace, price), and
 * its spend by UTC day, newest first (31 days unless `days` says otherwise, at most 400).
 */
export async function carbonUsage(request: Request, env: Env, edge: EdgeContext): Promise<Response> {
  const { snapshot } = await edge.cache.get(env);
  const caller = await authenticateCaller(request, env, snapshot.apiKeys);
  if (!caller.ok) return caller.response;
  if (caller.keyId === null) return openAiError(401, "Carbon usage is kept per API key: pass one as 'Authorization: Bearer gfk_...'.", { code: "invalid_api_key" });
  const raw = new URL(request.url).searchParams.get("days");
  const days = raw === null ? 31 : /^\d{1,3}$/.test(raw) ? Number(raw) : NaN;
  if (!(days >= 1 && days <= MAX_DAYS)) return openAiError(400, `days must be a whole number from 1 to ${MAX_DAYS}`, { param: "days", code: "invalid_value" });
  const ledger = carbonLedger(env, caller.keyId);
  const nowMs = edge.now();
  const budget = caller.carbonBudget;
  let period = null;
  if (budget) {
    const pace = await ledger.pace(budget, nowMs);
    const { startMs, endMs } = budgetPeriod(budget.period, nowMs);
    period = { start: Math.floor(startMs / 1000), end: Math.floor(endMs / 1000), spent_gco2e: round6(pace.spentG), pace: round6(pace.pace), carbon_price: round6(pace.price), exhausted: pace.exhausted };
  }
  const byDay = (await ledger.recentDays(days)).map((d) => ({ date: d.date, gco2e: round6(d.gco2e), requests: d.requests }));
  return Response.json({ object: "carbon_usage", key_id: caller.keyId, budget: budget ? { gco2e: budget.gco2e, period: budget.period } : null, current_period: period, days: byDay });
}

const round6 = (x: number) => Math.round(x * 1e6) / 1e6;
