export { greenferencePlanner, GreenferenceConfig, GREENFERENCE_DEFAULT_WEIGHTS, WORLD_AVERAGE_G_PER_KWH } from "./greenference-planner.ts";
export { greenferenceCost, type CostContext } from "./greenference-cost.ts";
export { ecoFreqBounds } from "./clock-bounds.ts";
