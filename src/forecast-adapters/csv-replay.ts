import { alignedReplayOffset, parseReplayCsv, replayForecast, type ReplaySeries } from "../core/forecast/csv-replay.ts";
import type { Forecast, ForecastKind, ForecastSubject, ForecastUnit } from "../core/schemas/forecast.ts";
import { getText, type HttpOptions } from "./http.ts";

/** The horizon of a replayed forecast: one day. */
export const REPLAY_HORIZON_MS = 24 * 3_600_000;

export interface ReplayRequest {
  /** An http(s) URL of a CSV in the grid format. */
  url: string;
  column: string;
  kind: ForecastKind;
  unit: ForecastUnit;
  subject: ForecastSubject;
  nowMs: number;
  /** Series time = wall time - offset; whole weeks aligned to the series when undefined. */
  offsetMs: number | undefined;
}

/**
 * CSV replay from a URL (in the Worker a series never comes from the filesystem: it is uploaded
 * through the admin API or fetched here). Series are cached per URL and column for the life of
 * the cache object passed in (one refresh, or an isolate).
 *
 * @example
 * await fetchReplay({ url, column: "avg_CI", kind: "carbon_average", unit: "gCO2/kWh", subject, nowMs, offsetMs: undefined }, http, new Map());
 */
export async function fetchReplay(req: ReplayRequest, http: HttpOptions, cache: Map<string, Promise<ReplaySeries>>): Promise<Forecast> {
  const source = `replay:${req.url.split("/").pop() ?? req.url}`;
  const key = `${req.url}\u0000${req.column}`;
  let series = cache.get(key);
  if (!series) {
    series = getText(source, req.url, { accept: "text/csv" }, http).then((text) => parseReplayCsv(text, req.column, source));
    cache.set(key, series);
  }
  const s = await series;
  const offsetMs = req.offsetMs ?? alignedReplayOffset(s, req.nowMs);
  return replayForecast(s, { nowMs: req.nowMs, offsetMs, horizonMs: REPLAY_HORIZON_MS, kind: req.kind, unit: req.unit, subject: req.subject });
}
