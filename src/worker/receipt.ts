import type { EnergyReceipt } from "../core/routing/energy-receipt.ts";
import { RECEIPT_HEADERS as H, type UsageReceipt } from "../core/schemas/receipt.ts";

// The edge's side of the receipt protocol (src/core/schemas/receipt.ts): its headers and `usage.greenference`.

/** Where the edge routed a request, as its receipt names it. */
export interface RoutedAs {
  site: string;
  classId: string;
  planVersion: number | null;
}

/** The headers of a receipt. */
export function receiptHeaders(receipt: EnergyReceipt): Record<string, string> {
  return {
    [H.energyJ]: round(receipt.energyJ, 3),
    [H.gco2e]: round(receipt.gco2e, 6),
    [H.carbonIntensity]: round(receipt.carbonGPerKwh, 1),
    [H.receipt]: receipt.source,
  };
}

export function usageReceipt(receipt: EnergyReceipt, routed: RoutedAs): UsageReceipt {
  return {
    site: routed.site,
    class: routed.classId,
    plan_version: routed.planVersion,
    energy_j: Number(round(receipt.energyJ, 3)),
    gco2e: Number(round(receipt.gco2e, 6)),
    carbon_intensity_g_per_kwh: Number(round(receipt.carbonGPerKwh, 1)),
    carbon_intensity_origin: receipt.carbonOrigin,
    energy_source: receipt.source,
  };
}

/** Energy a site reported: `usage.greenference.energy_j` first, then the header. */
export function reportedEnergyJ(usage: unknown, headers?: Headers): number | undefined {
  const fromUsage = (usage as { greenference?: { energy_j?: unknown } } | null | undefined)?.greenference?.energy_j;
  if (typeof fromUsage === "number" && Number.isFinite(fromUsage) && fromUsage >= 0) return fromUsage;
  const header = headers?.get(H.energyJ);
  const value = header === null || header === undefined || header.trim() === "" ? NaN : Number(header);
  return Number.isFinite(value) && value >= 0 ? value : undefined;
}

/** Whether the site says its reported energy was measured (`usage.greenference.energy_source`). */
export function reportedMeasured(usage: unknown): boolean {
  return (usage as { greenference?: { energy_source?: unknown } } | null | undefined)?.greenference?.energy_source === "measured";
}

/** Token counts from an OpenAI usage object, where present. */
export function usageTokens(usage: unknown): { prompt?: number; completion?: number } {
  const u = usage as { prompt_tokens?: unknown; completion_tokens?: unknown } | null | undefined;
  const num = (x: unknown) => (typeof x === "number" && Number.isFinite(x) && x >= 0 ? x : undefined);
  const out: { prompt?: number; completion?: number } = {};
  const prompt = num(u?.prompt_tokens);
  const completion = num(u?.completion_tokens);
  if (prompt !== undefined) out.prompt = prompt;
  if (completion !== undefined) out.completion = completion;
  return out;
}

function round(x: number, digits: number): string {
  return String(Number(x.toFixed(digits)));
}
