import { z } from "zod";
import { forecastsOver } from "../src/core/dashboard/forecast-window.ts";
import { fleetSubjectIndex, subjectOutsideFleet } from "../src/core/forecast/fleet-subjects.ts";
import { ForecastStore, seriesKey } from "../src/core/forecast/forecast-store.ts";
import type { Store } from "../src/core/ports/store.ts";
import { MAX_CLOCK_SKEW_MS } from "../src/core/schemas/clock-skew.ts";
import type { Fleet } from "../src/core/schemas/fleet.ts";
import { Forecast } from "../src/core/schemas/forecast.ts";
import { failure, invalid, success, type Outcome } from "./outcome.ts";

/** Forecasts one upload may hold. */
export const FORECASTS_PER_UPLOAD = 256;

/**
 * ControlDO's forecasts (the core's ForecastStore over DO storage) and what may enter them: a
 * forecast or a list of up to FORECASTS_PER_UPLOAD that parses, none issued in the future.
 */
export class ForecastIntake {
  readonly store: ForecastStore;

  constructor(storage: DurableObjectStorage) {
    this.store = new ForecastStore(durableStore(storage));
  }

  /**
   * Validates and stores a forecast or a list of them (400 naming the path of the first bad field),
   * observed at `nowMs`. With `against` (the operator's uploads), every site and class subject must
   * be the fleet's: 400 naming the first that is not, 409 while no fleet is stored.
   */
  async put(input: unknown, nowMs: number, o: { against?: { fleet: Fleet | null } } = {}): Promise<Outcome<{ stored: number; series: string[] }>> {
    const parsed = Array.isArray(input) ? z.array(Forecast).min(1).max(FORECASTS_PER_UPLOAD).safeParse(input) : Forecast.transform((f) => [f]).safeParse(input);
    if (!parsed.success) return invalid("forecast", parsed.error);
    const at = (i: number, field: string) => (Array.isArray(input) ? `[${i}].${field}` : field);
    // A forecast from the future would stay the latest of its series until that time came.
    const future = parsed.data.findIndex((f) => f.issuedAtMs > nowMs + MAX_CLOCK_SKEW_MS);
    if (future >= 0) {
      const param = at(future, "issuedAtMs");
      return failure(400, `forecast ${param} is ${Math.round((parsed.data[future]!.issuedAtMs - nowMs) / 1000)} s in the future (more than the ${MAX_CLOCK_SKEW_MS / 1000} s clocks may disagree)`, param);
    }
    if (o.against) {
      const refused = outsideFleet(parsed.data, o.against.fleet, at);
      if (refused) return refused;
    }
    for (const f of parsed.data) await this.store.put(f, nowMs);
    return success({ stored: parsed.data.length, series: [...new Set(parsed.data.map(seriesKey))] });
  }

  /** By series key, the power and carbon forecasts of the fleet's sites in force over [fromMs, toMs] (see forecastsOver). */
  async siteWindows(fleet: Fleet | null, fromMs: number, toMs: number): Promise<Record<string, Forecast[]>> {
    const sites = new Set<string>(fleet?.sites.map((s) => s.id));
    const windows: Record<string, Forecast[]> = {};
    for (const f of this.store.all()) {
      if (f.kind === "load" || f.subject.kind !== "site" || !sites.has(f.subject.id)) continue;
      windows[seriesKey(f)] = forecastsOver(await this.store.issued(seriesKey(f)), fromMs, toMs);
    }
    return windows;
  }
}

/** A 400 for the first forecast about a site or class not in the fleet, a 409 for one about either while there is no fleet, or null. */
function outsideFleet(forecasts: readonly Forecast[], fleet: Fleet | null, at: (i: number, field: string) => string): Outcome<never> | null {
  if (!fleet) {
    const i = fleetSubjectIndex(forecasts);
    return i < 0 ? null : failure(409, `no fleet is stored yet, so forecast ${at(i, "subject")} (a ${forecasts[i]!.subject.kind}) cannot be checked against it; PUT /admin/v1/fleet first`, at(i, "subject"), "no_fleet");
  }
  const outside = subjectOutsideFleet(forecasts, fleet);
  return outside && failure(400, `forecast ${at(outside.index, "subject.id")}: ${outside.message}; nothing was stored`, at(outside.index, "subject.id"), "unknown_subject");
}

/** DO storage as the core's Store port. */
function durableStore(storage: DurableObjectStorage): Store {
  return {
    get: (key) => storage.get(key),
    put: (key, value) => storage.put(key, value),
    delete: async (key) => void (await storage.delete(key)),
    list: (prefix) => storage.list({ prefix }),
  };
}
