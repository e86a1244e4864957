import { z } from "zod";
import { forecastsOver } from "../src/core/dashboard/forecast-window.ts";
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

  /** Validates and stores a forecast or a list of them (400 naming the path of the first bad field), observed at `nowMs`. */
  async put(input: unknown, nowMs: number): Promise<Outcome<{ stored: number; series: string[] }>> {
    const parsed = Array.isArray(input) ? z.array(Forecast).min(1).max(FORECASTS_PER_UPLOAD).safeParse(input) : Forecast.transform((f) => [f]).safeParse(input);
    if (!parsed.success) return invalid("forecast", parsed.error);
    // A forecast from the future would stay the latest of its series until that time came.
    const future = parsed.data.findIndex((f) => f.issuedAtMs > nowMs + MAX_CLOCK_SKEW_MS);
    if (future >= 0) {
      const at = Array.isArray(input) ? `[${future}].issuedAtMs` : "issuedAtMs";
      return failure(400, `forecast ${at} is ${Math.round((parsed.data[future]!.issuedAtMs - nowMs) / 1000)} s in the future (more than the ${MAX_CLOCK_SKEW_MS / 1000} s clocks may disagree)`, at);
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

/** DO storage as the core's Store port. */
function durableStore(storage: DurableObjectStorage): Store {
  return {
    get: (key) => storage.get(key),
    put: (key, value) => storage.put(key, value),
    delete: async (key) => void (await storage.delete(key)),
    list: (prefix) => storage.list({ prefix }),
  };
}
