import { defaultClocks } from "../../src/core/profiling/virtual-profiler.ts";
import type { FleetSite } from "../../src/core/sim/fleet/fleet-types.ts";
import type { Scenario } from "../../src/core/sim/scenario/scenario.ts";
import { CliError } from "../../lib/cli-error.ts";

/**
 * Refuses a capacity policy that no site can run, which would simulate a fleet serving nothing: a
 * clock the profile has for none of a site's GPU type, or a TP larger than every site's GPU count.
 */
export function checkPolicyFits(policy: Scenario["policy"], sites: readonly FleetSite[], source: string): void {
  if (policy.kind !== "capacity") return;
  const { mhz, tp } = policy;
  if (mhz !== "max") {
    for (const { gpu } of sites) {
      const clocks = defaultClocks(gpu);
      if (!clocks.includes(mhz)) throw new CliError(`${source}: policy.mhz: ${mhz} MHz is not a profiled clock of ${gpu.type} (${clocks.join(", ")}, or "max")`);
    }
  }
  const most = Math.max(...sites.map((s) => s.gpus));
  if (tp > most) throw new CliError(`${source}: policy.tp: TP ${tp} needs ${tp} GPUs, but no site has that many (most: ${most})`);
}
