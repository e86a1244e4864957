import type { Site } from "../schemas/fleet.ts";

/**
 * Grid intensity used when a site's carbon source has reported nothing yet: about the world
 * average of electricity generation (Ember, Global Electricity Review 2024: ~480 gCO2e/kWh for 2023).
 */
export const DEFAULT_CARBON_G_PER_KWH = 480;

/** Where a site's intensity came from: its fleet entry (fixed or wind life-cycle), a reported value, or the default. */
export type CarbonOrigin = "fleet" | "reported" | "default";

export interface SiteCarbon {
  gPerKwh: number;
  origin: CarbonOrigin;
}

/**
 * A site's current carbon intensity: fixed and wind sites from the fleet (wind at its life-cycle
 * intensity), others from the latest reported value (forecast refresh), else the default.
 *
 * @example
 * siteCarbonIntensity(site, 212); // { gPerKwh: 212, origin: "reported" } for a grid site
 */
export function siteCarbonIntensity(site: Site, reportedGPerKwh?: number): SiteCarbon {
  if (site.carbon.kind === "fixed") return { gPerKwh: site.carbon.gPerKwh, origin: "fleet" };
  if (site.power.kind === "wind") return { gPerKwh: site.power.lifecycleGPerKwh, origin: "fleet" };
  if (reportedGPerKwh !== undefined) return { gPerKwh: reportedGPerKwh, origin: "reported" };
  return { gPerKwh: DEFAULT_CARBON_G_PER_KWH, origin: "default" };
}

/** gCO2e of `energyJ` joules at `gPerKwh`: J / 3.6e6 J/kWh x g/kWh. */
export function carbonGrams(energyJ: number, gPerKwh: number): number {
  return (energyJ / 3.6e6) * gPerKwh;
}
