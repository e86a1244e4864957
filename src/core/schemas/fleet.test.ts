import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { Fleet, MAX_POLICY_WEIGHT, MAX_SITE_GPUS, sameFleet, samePlanningFleet, WIND_LIFECYCLE_G_PER_KWH } from "./fleet.ts";

type FleetInput = z.input<typeof Fleet>;

const slo = { ttftMs: 500, tbtMs: 100 };

/** Two sites (wind and grid), one model with two variants, FREESH-style 2x2 classes. */
function validFleet(): FleetInput {
  return {
    sites: [
      {
        id: "wind-nl-1",
        region: "eu-west",
        ingressUrl: "https://wind-nl-1.example.net",
        gpus: [{ type: "H100-80GB", count: 8 }],
        power: { kind: "wind", series: { kind: "file", path: "data/wind.csv", column: "mw" }, peakMw: 2.5, rightSizingPercentile: 10 },
        carbon: { kind: "electricitymaps", zone: "NL" },
        rttMs: { AMS: 3, FRA: 9 },
      },
      {
        id: "grid-ca-1",
        region: "us-west",
        ingressUrl: "http://10.0.0.7:8080",
        gpus: [{ type: "A100-80GB", count: 4 }, { type: "H100-80GB", count: 4 }],
        power: { kind: "grid", region: "CAISO_NORTH", capW: 40_000 },
        carbon: { kind: "watttime", region: "CAISO_NORTH", signal: "marginal" },
      },
    ],
    models: [{ id: "llama-3-70b" }],
    variants: [
      { model: "llama-3-70b", id: "base", quality: 1, memoryGb: 140, parameterCount: 70e9 },
      { model: "llama-3-70b", id: "int8", quality: 0.97, memoryGb: 70, parameterCount: 70e9 },
    ],
    classScheme: { name: "freesh-2x2", inputEdges: [512], outputEdges: [256], inputLabels: ["S", "L"], outputLabels: ["S", "L"] },
    classes: [
      { id: "SS", inputBin: 0, outputBin: 0, slo },
      { id: "SL", inputBin: 0, outputBin: 1, slo },
      { id: "LS", inputBin: 1, outputBin: 0, slo },
      { id: "LL", inputBin: 1, outputBin: 1, tier: "batch", slo: { ...slo, e2eMs: 60_000 } },
    ],
    policy: { kind: "greenference", weights: { carbon: 1, latency: 0.2 } },
  };
}

/** The dotted paths of the issues a failed parse reports. */
function issuePaths(input: unknown): string[] {
  const result = Fleet.safeParse(input);
  expect(result.success).toBe(false);
  return result.error?.issues.map((i) => i.path.join(".")) ?? [];
}

function withChange(change: (f: FleetInput) => void): FleetInput {
  const f = structuredClone(validFleet());
  change(f);
  return f;
}

describe("Fleet", () => {
  it("parses a valid fleet and fills defaults", () => {
    const fleet = Fleet.parse(validFleet());
    expect(fleet.sites[0]?.power).toMatchObject({ kind: "wind", lifecycleGPerKwh: WIND_LIFECYCLE_G_PER_KWH });
    expect(fleet.sites[0]?.carbon).toMatchObject({ signal: "average" });
    expect(fleet.sites[1]?.rttMs).toEqual({});
    expect(fleet.policy.weights).toEqual({ carbon: 1, energy: 0, latency: 0.2, accuracy: 0 });
  });

  it("accepts every power and carbon source kind", () => {
    const f = withChange((f) => {
      f.sites[0]!.power = { kind: "fixed", capW: 10_000 };
      f.sites[0]!.carbon = { kind: "uk-carbon-intensity", regionId: 13 };
      f.sites[1]!.power = { kind: "wind", series: { kind: "forecast", forecastId: "fc-1" }, peakMw: 1, rightSizingPercentile: 5, lifecycleGPerKwh: 12 };
      f.sites[1]!.carbon = { kind: "replay", path: "data/ci.csv", column: "marginal", signal: "marginal" };
    });
    expect(Fleet.safeParse(f).success).toBe(true);
    expect(Fleet.safeParse(withChange((f) => (f.sites[0]!.carbon = { kind: "fixed", gPerKwh: 0 }))).success).toBe(true);
  });

  it("rejects an unknown power source kind and a bad ingress URL", () => {
    expect(issuePaths(withChange((f) => ((f.sites[0]!.power as { kind: string }).kind = "solar")))).toContain("sites.0.power.kind");
    expect(issuePaths(withChange((f) => (f.sites[0]!.ingressUrl = "ftp://x.example")))).toContain("sites.0.ingressUrl");
  });

  it("rejects duplicate site ids", () => {
    expect(issuePaths(withChange((f) => (f.sites[1]!.id = "wind-nl-1")))).toEqual(["sites.1.id"]);
  });

  it("rejects a GPU type listed twice at one site", () => {
    expect(issuePaths(withChange((f) => (f.sites[1]!.gpus[1]!.type = "A100-80GB")))).toEqual(["sites.1.gpus.1.type"]);
  });

  it("rejects a variant of an unknown model and a model without variants", () => {
    const paths = issuePaths(withChange((f) => f.variants.forEach((v) => (v.model = "mistral-7b"))));
    expect(paths).toEqual(["variants.0.model", "variants.1.model", "models.0"]);
  });

  it("rejects a duplicate (model, variant)", () => {
    expect(issuePaths(withChange((f) => (f.variants[1]!.id = "base")))).toEqual(["variants.1.id"]);
  });

  it("rejects a class of the scheme that has no SLO", () => {
    expect(issuePaths(withChange((f) => f.classes.pop()))).toEqual(["classes"]);
  });

  it("rejects a class whose id does not match its bins, or whose bin is outside the scheme", () => {
    expect(issuePaths(withChange((f) => (f.classes[1]!.id = "LS")))).toEqual(["classes.2.id", "classes.1.id", "classes"]);
    expect(issuePaths(withChange((f) => (f.classes[3]!.outputBin = 2)))).toEqual(["classes.3.outputBin"]);
  });

  it("rejects policy weights that are all zero and an unknown policy kind", () => {
    expect(issuePaths(withChange((f) => (f.policy.weights = {})))).toEqual(["policy.weights"]);
    expect(issuePaths(withChange((f) => ((f.policy as { kind: string }).kind = "greedy")))).toEqual(["policy.kind"]);
  });
});

describe("sameFleet", () => {
  it("bounds a site's GPUs at MAX_SITE_GPUS, per type and all types together", () => {
    expect(Fleet.safeParse(withChange((f) => (f.sites[0]!.gpus = [{ type: "H100-80GB", count: MAX_SITE_GPUS }]))).success).toBe(true);
    expect(issuePaths(withChange((f) => (f.sites[0]!.gpus = [{ type: "H100-80GB", count: 1_000_000_000 }])))).toEqual(["sites.0.gpus.0.count"]);
    const split = withChange((f) => (f.sites[1]!.gpus = [{ type: "A100-80GB", count: MAX_SITE_GPUS / 2 }, { type: "H100-80GB", count: MAX_SITE_GPUS / 2 + 1 }]));
    expect(issuePaths(split)).toEqual(["sites.1.gpus"]);
  });

  it("bounds each policy weight at MAX_POLICY_WEIGHT, naming the weight", () => {
    expect(Fleet.safeParse(withChange((f) => (f.policy.weights = { carbon: MAX_POLICY_WEIGHT, latency: 0.01 }))).success).toBe(true);
    expect(issuePaths(withChange((f) => (f.policy.weights = { carbon: 1, accuracy: 1e308 })))).toEqual(["policy.weights.accuracy"]);
  });

  it("is the same fleet whatever order an object's keys came in, and another for any field changed", () => {
    const fleet = Fleet.parse(validFleet());
    const site = fleet.sites[0]!;
    const reordered = { ...fleet, sites: [{ ...site, rttMs: Object.fromEntries(Object.entries(site.rttMs).reverse()) }, ...fleet.sites.slice(1)] };
    expect(JSON.stringify(reordered)).not.toBe(JSON.stringify(fleet));
    expect(sameFleet(reordered, fleet)).toBe(true);
    expect(sameFleet({ ...fleet, sites: [{ ...site, rttMs: { ...site.rttMs, AMS: 4 } }, ...fleet.sites.slice(1)] }, fleet)).toBe(false);
    expect(sameFleet({ ...fleet, policy: { ...fleet.policy, weights: { ...fleet.policy.weights, carbon: 7 } } }, fleet)).toBe(false);
    expect(sameFleet({ ...fleet, sites: fleet.sites.slice().reverse() }, fleet)).toBe(false);
  });
});

describe("samePlanningFleet", () => {
  it("plans alike when only where sites are reached changed, and not for any other field", () => {
    const fleet = Fleet.parse(validFleet());
    const site = fleet.sites[0]!;
    expect(samePlanningFleet({ ...fleet, sites: [{ ...site, ingressUrl: "https://elsewhere.example.net" }, ...fleet.sites.slice(1)] }, fleet)).toBe(true);
    expect(samePlanningFleet({ ...fleet, sites: [{ ...site, gpus: [{ ...site.gpus[0]!, count: site.gpus[0]!.count + 1 }] }, ...fleet.sites.slice(1)] }, fleet)).toBe(false);
    expect(samePlanningFleet({ ...fleet, policy: { ...fleet.policy, weights: { ...fleet.policy.weights, carbon: 7 } } }, fleet)).toBe(false);
  });
});
