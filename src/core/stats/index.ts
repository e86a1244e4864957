export * from "./percentile.ts";
export * from "./moments.ts";
export * from "./normal.ts";
export * from "./interpolate-gaps.ts";
