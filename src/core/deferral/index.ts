/** The carbon-aware deferral scheduler: work that can wait, placed into (slot, site) pairs. */
export * from "./cohorts.ts";
export * from "./deferral-model.ts";
export * from "./plan-deferral.ts";
export * from "./deferral-world.ts";
export * from "./online-deferral.ts";
export * from "./at-submission.ts";
export * from "./offline-optimum.ts";
export * from "./batch-operating-point.ts";
export * from "./spare-capacity.ts";
export * from "./release-now.ts";
export * from "./deferral-site.ts";
