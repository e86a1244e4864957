import type { Fleet } from "../schemas/fleet.ts";
import type { ProfileRow } from "../schemas/profile.ts";

/** Names listed in a message before "and N more". */
const NAMES_LISTED = 8;

/** The profile rows of the fleet's models on its GPU types: what the fleet planners plan on. */
export function fleetRows(fleet: Fleet, stored: readonly ProfileRow[] | null): ProfileRow[] {
  const models = new Set<string>(fleet.models.map((m) => m.id));
  const gpus = new Set(fleet.sites.flatMap((s) => s.gpus.map((g) => g.type)));
  return stored?.filter((r) => models.has(r.model) && gpus.has(r.gpu)) ?? [];
}

/**
 * Why a profile table gives the planners nothing to plan the fleet on (none of its rows is of a
 * fleet model on a fleet GPU type: `fleetRows` is empty, and every planner run is skipped), naming
 * what the fleet needs and what the table holds; null when it covers the fleet.
 */
export function profileCoverageGap(fleet: Fleet, rows: readonly ProfileRow[]): string | null {
  if (fleetRows(fleet, rows).length > 0) return null;
  const fleetModels = listed(fleet.models.map((m) => m.id));
  const fleetGpus = listed(fleet.sites.flatMap((s) => s.gpus.map((g) => g.type)));
  const tableModels = listed(rows.map((r) => r.model));
  const tableGpus = listed(rows.map((r) => r.gpu));
  return `the profile table has no row of the fleet's models ${fleetModels} on its GPU types ${fleetGpus} (it holds ${tableModels} on ${tableGpus}), so no planner could plan the fleet on it`;
}

/** Distinct names, the first NAMES_LISTED of them, each cut to 64 characters. */
function listed(names: readonly string[]): string {
  const distinct = [...new Set(names)];
  const shown = distinct.slice(0, NAMES_LISTED).map((n) => n.slice(0, 64));
  return shown.join(", ") + (distinct.length > NAMES_LISTED ? ` and ${distinct.length - NAMES_LISTED} more` : "");
}
