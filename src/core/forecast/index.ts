/** Forecasts: provider response parsers, CSV replay, persistence fallback, storage, Clover's trigger, demand. */
export * from "./forecast-source-error.ts";
export * from "./forecast-points.ts";
export * from "./series-value.ts";
export * from "./electricity-maps.ts";
export * from "./watttime.ts";
export * from "./uk-carbon-intensity.ts";
export * from "./csv-replay.ts";
export * from "./persistence.ts";
export * from "./sample-compaction.ts";
export * from "./forecast-store.ts";
export * from "./carbon-trigger.ts";
export * from "./demand-estimate.ts";
