/** Every contract of the system (DESIGN.md section 3), one zod schema each, types inferred from them. */
export * from "./ids.ts";
export * from "./request-class.ts";
export * from "./profile.ts";
export * from "./fleet.ts";
export * from "./plan.ts";
export * from "./telemetry.ts";
export * from "./forecast.ts";
export * from "./deferral.ts";
export * from "./site-power-forecast.ts";
export * from "./json-schema.ts";
export * from "./site-hop.ts";
export * from "./json-limits.ts";
export * from "./clock-skew.ts";
export * from "./mig.ts";
export * from "./plan-slice.ts";
