/** The bench's model: one model served everywhere. */
export const BENCH_MODEL = "llama-3.1-8b";

/** Edge regions every site has an RTT figure for; requests enter at AMS (Europe). */
const RTT_REGIONS = ["AMS", "EU", "NA", "AS"];
const CLASS_IDS = ["SS", "SM", "SL", "MS", "MM", "ML", "LS", "LM", "LL"];

/** Site ids s00..s63. */
export function siteIds(n = 64): string[] {
  return Array.from({ length: n }, (_, i) => `s${String(i).padStart(2, "0")}`);
}

/**
 * A 64-site x 9-class fleet (3x3 scheme, one model), every site reachable at `ingressUrl(site)`;
 * the RTTs keep every site inside the classes' TTFT SLO so no request is refused for distance.
 */
export function benchFleet(ingressUrl: (site: string) => string, sites = siteIds()) {
  return {
    sites: sites.map((id, i) => ({
      id,
      region: `r${i % 8}`,
      ingressUrl: ingressUrl(id),
      gpus: [{ type: "H100-80GB", count: 16 }],
      power: { kind: "fixed", capW: 40_000 },
      carbon: { kind: "fixed", gPerKwh: 50 + ((i * 37) % 400) },
      rttMs: Object.fromEntries(RTT_REGIONS.map((r, j) => [r, 5 + ((i + j * 11) % 60)])),
    })),
    models: [{ id: BENCH_MODEL }],
    variants: [{ model: BENCH_MODEL, id: "base", quality: 1, memoryGb: 16, parameterCount: 8e9 }],
    classScheme: { name: "3x3", inputEdges: [256, 1024], outputEdges: [128, 512], inputLabels: ["S", "M", "L"], outputLabels: ["S", "M", "L"] },
    classes: CLASS_IDS.map((id, i) => ({ id, inputBin: Math.floor(i / 3), outputBin: i % 3, slo: { ttftMs: 2_000, tbtMs: 200 } })),
    policy: { kind: "greenference", weights: { carbon: 1, latency: 0.1 } },
  };
}

/**
 * A plan over the fleet: every site runs one TP1 instance per class (9 of its 16 GPUs) and every
 * class is routed over all 64 sites with weights 1..5, so each pool has 64 targets.
 */
export function benchPlan(version: number, sites = siteIds()) {
  const instance = (c: number) => ({ id: `i${c}`, model: BENCH_MODEL, variant: "base", tp: 1, gpus: [c], clock: { mode: "locked", mhz: 1980 } });
  return {
    version,
    createdAtMs: 1_700_000_000_000,
    validUntilMs: 4_000_000_000_000,
    policy: "greenference",
    sites: sites.map((site) => ({ site, powerCapW: 40_000, instances: CLASS_IDS.map((_, c) => instance(c)) })),
    routing: Object.fromEntries(CLASS_IDS.map((cls, c) => [cls, sites.map((site, i) => ({ site, instance: `i${c}`, weight: 1 + ((i + c) % 5) }))])),
  };
}

/** A heartbeat saying all of a site's instances are ready and idle. */
export function benchTelemetry(site: string, sentAtMs: number) {
  return {
    site,
    sentAtMs,
    appliedPlanVersion: 1,
    sitePowerW: 10_000,
    gpus: [],
    instances: CLASS_IDS.map((_, c) => ({ id: `i${c}`, state: "ready", waiting: 0, running: 1, kvUse: 0.2 })),
  };
}
