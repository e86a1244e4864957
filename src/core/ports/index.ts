export * from "./clock.ts";
export * from "./rng.ts";
export * from "./lp-solver.ts";
export * from "./store.ts";
