export * from "./class-scheme.ts";
export * from "./freesh-partition.ts";
export * from "./length-sampler.ts";
export * from "./length-generators.ts";
export * from "./week-template.ts";
export * from "./synthetic-week.ts";
