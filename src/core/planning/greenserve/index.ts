export { RecursiveLeastSquares } from "./recursive-least-squares.ts";
export { EcoPred, type EcoPredOptions } from "./eco-pred.ts";
export { profileIterations, trainOffline, type IterationSample, type OfflineProfilingOptions } from "./offline-profiling.ts";
export { EcoFreq, GREENSERVE_A100_FREQS, GREENSERVE_A100_FREQS_5L, sweetSpotToMax, type EcoFreqInput, type EcoFreqSlo } from "./eco-freq.ts";
export { ecoFreqClock, type EcoClock, type EcoClockOptions } from "./eco-clock.ts";
export { PrefillArrivals, roundRobinPrefill } from "./prefill-arrivals.ts";
export { ecoRoute, ecoRouteDecision, GREENSERVE_DELTA_MHZ, type EcoRouteCase, type EcoRouteOptions, type EcoRouter } from "./eco-route.ts";
export { greenServeExperiment, greenServeOnRequests, type GreenServeExperiment, type GreenServeExperimentOptions, type GreenServeSystemOptions, type ServingResult } from "./experiment.ts";
export { greenServePlanner, GreenServePlannerConfig } from "./greenserve-planner.ts";
