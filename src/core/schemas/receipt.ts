import { z } from "zod";

/**
 * The receipt protocol between sites, edge and clients.
 *
 * A site reports a request's energy either in the response header `x-greenference-energy-j`
 * (non-streaming) or as `usage.greenference.energy_j` in the final usage object (both modes), with
 * `usage.greenference.energy_source: "measured"` when its agent metered it. The edge answers with the headers below on every proxied response, estimated at the start for
 * streams, and with `usage.greenference` (see UsageReceipt) in the JSON body or the final SSE
 * usage chunk.
 */
export const RECEIPT_HEADERS = {
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

/** `usage.greenference` in the edge's answers. */
export const UsageReceipt = z.object({
  site: z.string(),
  class: z.string(),
  plan_version: z.number().int().nonnegative().nullable(),
  energy_j: z.number().nonnegative(),
  gco2e: z.number(),
  carbon_intensity_g_per_kwh: z.number(),
  /** Where the intensity came from: the fleet entry (fixed or wind life-cycle), a reported value, or the default. */
  carbon_intensity_origin: z.enum(["fleet", "reported", "default"]),
  /** "measured" when the site metered it, "site" when the site reported it otherwise, "estimate" when the edge estimated it from tokens. */
  energy_source: z.enum(["measured", "site", "estimate"]),
});
export type UsageReceipt = z.infer<typeof UsageReceipt>;
