import { listNames } from "../schemas/checks.ts";
import type { Fleet } from "../schemas/fleet.ts";
import type { ProfileRow } from "../schemas/profile.ts";

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
  const fleetModels = listNames(fleet.models.map((m) => m.id));
  const fleetGpus = listNames(fleet.sites.flatMap((s) => s.gpus.map((g) => g.type)));
  const tableModels = listNames(rows.map((r) => r.model));
  const tableGpus = listNames(rows.map((r) => r.gpu));
  return `the profile table has no row of the fleet's models ${fleetModels} on its GPU types ${fleetGpus} (it holds ${tableModels} on ${tableGpus}), so no planner could plan the fleet on it`;
}
