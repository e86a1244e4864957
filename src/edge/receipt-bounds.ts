/**
 * How many settled receipts one key's CarbonLedgerDO keeps, and for how long: RECEIPTS_MAX_PER_KEY
 * (default 10,000) and RECEIPTS_MAX_AGE_S (default 86,400 s), set in wrangler.toml. The Worker
 * reads them and hands them to the object with each receipt, so each receipt is kept by the
 * bounds in force when it settled.
 */
export interface ReceiptBounds {
  maxCount: number;
  maxAgeMs: number;
}

/** The bounds from the Worker's vars (defaults where unset or not a positive whole number). */
export function receiptBounds(env: Env): ReceiptBounds {
  const whole = (raw: string | undefined, fallback: number) => (raw !== undefined && /^\d{1,12}$/.test(raw) && Number(raw) > 0 ? Number(raw) : fallback);
  return { maxCount: whole(env.RECEIPTS_MAX_PER_KEY, 10_000), maxAgeMs: whole(env.RECEIPTS_MAX_AGE_S, 86_400) * 1000 };
}
