import type { EnergyReceipt } from "../core/routing/energy-receipt.ts";

/**
 * The receipt protocol between sites, edge and clients.
 *
 * A site reports a request's energy either in the response header `x-greenference-energy-j`
 * (non-streaming) or as `usage.greenference.energy_j` in the final usage object (both modes), with
 * `usage.greenference.energy_source: "measured"` when its agent metered it. The
 * edge answers with the headers below on every proxied response, estimated at the start for
 * streams, and with `usage.greenference` (see UsageReceipt) in the JSON body or the final SSE
 * usage chunk.
 */
export const H = {
  site: "x-greenference-site",
  instance: "x-greenference-instance",
  class: "x-greenference-class",
  pool: "x-greenference-pool",
  plan: "x-greenference-plan",
  energyJ: "x-greenference-energy-j",
  gco2e: "x-greenference-gco2e",
  carbonIntensity: "x-greenference-carbon-intensity",
  receipt: "x-greenference-receipt",
  /** Sites tried for the request: 2 when the first failed before its first byte and it was retried. */
  attempts: "x-greenference-attempts",
  /** A budgeted key's carbon price when it was routed (0 on pace; above 0 steers it to cleaner sites). */
  carbonPrice: "x-greenference-carbon-price",
  /** The tier a request that named `service_tier` ran at: "flex" (held, then released to spare capacity) or "default". */
  serviceTier: "x-greenference-service-tier",
  /** How long a flex request was held before its release (ms). */
  flexHeldMs: "x-greenference-flex-held-ms",
} as const;

/** `usage.greenference` in responses. */
export interface UsageReceipt {
  site: string;
  class: string;
  plan_version: number | null;
  energy_j: number;
  gco2e: number;
  carbon_intensity_g_per_kwh: number;
  carbon_intensity_origin: EnergyReceipt["carbonOrigin"];
  /** "measured" when the site metered it, "site" when the site reported it otherwise, "estimate" when the edge estimated it from tokens. */
  energy_source: EnergyReceipt["source"];
}

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
