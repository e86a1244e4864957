import { withinConcurrency } from "../../scheduling/replica-concurrency.ts";
import type { OptionSet } from "../operating-options.ts";

/**
 * The option sets without the points at which a replica would hold more requests in flight than
 * its site's gateway sends it at once (`withinConcurrency` at the point's load and median E2E):
 * there, requests would wait in the site queue for a slot, a wait the profile, measured on an
 * engine alone, does not show. A point at a lower clock lives longer per request, so the same
 * load can fit at the top clock and not at the floor. Without a cap (null), the sets as they are.
 *
 * @example
 * withinGatewaySlots(sets, 64); // SM at TP2: 3.1 req/s kept at 1785 MHz (12 s per request), dropped at 1200 MHz (20 s)
 */
export function withinGatewaySlots(sets: readonly OptionSet[], concurrency: number | null): OptionSet[] {
  if (concurrency === null) return [...sets];
  return sets.map((set) => ({ ...set, options: set.options.filter((o) => withinConcurrency(o.loadRps, o.e2eMs / 1000, concurrency)) }));
}
