import { listNames } from "../schemas/checks.ts";
import type { Fleet } from "../schemas/fleet.ts";
import type { Forecast } from "../schemas/forecast.ts";

/** A forecast whose subject the fleet does not name: its index in the upload, and why. */
export interface SubjectOutsideFleet {
  index: number;
  message: string;
}

/**
 * The first forecast about a site the fleet does not have or a class it does not define (a typo
 * such a series would otherwise be stored under, and read by no planner), or null. Region subjects
 * pass: they are grid zones in each provider's own names, which the fleet does not list as one set,
 * and no planner reads them (see fleet-input.ts).
 */
export function subjectOutsideFleet(forecasts: readonly Forecast[], fleet: Fleet): SubjectOutsideFleet | null {
  const sites = new Set<string>(fleet.sites.map((s) => s.id));
  const classes = new Set<string>(fleet.classes.map((c) => c.id));
  for (const [index, { subject }] of forecasts.entries()) {
    if (subject.kind === "site" && !sites.has(subject.id)) return { index, message: `site "${subject.id}" is not in the fleet, whose sites are ${listNames([...sites])}` };
    if (subject.kind === "class" && !classes.has(subject.id)) return { index, message: `class "${subject.id}" is not one of the fleet's classes, ${listNames([...classes])}` };
  }
  return null;
}

/** The first forecast about a site or a class, which cannot be checked while there is no fleet; -1 when none is. */
export function fleetSubjectIndex(forecasts: readonly Forecast[]): number {
  return forecasts.findIndex((f) => f.subject.kind !== "region");
}
