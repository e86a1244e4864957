import type { RequestOutcome } from "./request-outcome.ts";

/** Counts of what the load generator saw: served, errors by reason, and where requests ran. */
export function summariseOutcomes(outcomes: readonly RequestOutcome[]) {
  const bySite: Record<string, number> = {};
  const errorsByReason: Record<string, number> = {};
  let served = 0;
  let withReceipt = 0;
  for (const o of outcomes) {
    if (o.ok) {
      served++;
      if (o.receipt) withReceipt++;
      if (o.site) bySite[o.site] = (bySite[o.site] ?? 0) + 1;
    } else {
      const reason = `${o.status} ${(o.error ?? "").slice(0, 80)}`;
      errorsByReason[reason] = (errorsByReason[reason] ?? 0) + 1;
    }
  }
  return { requests: outcomes.length, served, errors: outcomes.length - served, withReceipt, bySite, errorsByReason };
}
