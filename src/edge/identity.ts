import type { CarbonBudget } from "../core/schemas/carbon-budget.ts";

/** A key's limits; null for no limit of that kind. */
export interface RateLimits {
  requestsPerMinute: number | null;
  tokensPerMinute: number | null;
}

/** An authenticated caller: its key id (null while the API is open and it sent none), limits and carbon budget. */
export interface Identity {
  keyId: string | null;
  limits: RateLimits;
  carbonBudget: CarbonBudget | null;
}

/** The owner of what a caller without an API key makes (files, batches), and the predictor's key for such callers. */
export const ANONYMOUS = "anonymous";
