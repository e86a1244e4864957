import type { GridValueSeries } from "../../src/core/data/grid-series.ts";
import { gpuSpec } from "../../src/core/model/gpu-specs.ts";
import { variantLlmSpec, weightBytes } from "../../src/core/model/llm-specs.ts";
import { fullSitePowerW } from "../../src/core/model/power.ts";
import { QWEN25_FAMILY } from "../../src/core/planning/clover/variants.ts";
import { POLICIES } from "../../src/core/policies/registry.ts";
import { DYNAMOLLM_CLASS_LENGTHS } from "../../src/core/profiling/class-lengths.ts";
import { isolatedLatencySlo } from "../../src/core/profiling/isolated-slo.ts";
import { linearPercentile } from "../../src/core/stats/percentile.ts";
import { Fleet } from "../../src/core/schemas/fleet.ts";
import type { StackConfig, StackSite } from "./stack-config.ts";

/** Heron's and DynamoLLM's SLO: this many times a request's isolated latency on the fastest configuration. */
export const SLO_MULTIPLE = 5;

/** A wind site's envelope: generation scaled so the right-sizing percentile runs every GPU flat out. */
export interface WindScaling {
  /** Watts of site power per MW of the region's wind generation. */
  wattsPerMw: number;
  peakW: number;
}

/** Site power with every GPU at TDP, server overhead included (Heron's power() for a full site). */
export function stackSitePowerW(config: StackConfig, site: StackSite): number {
  return fullSitePowerW([{ type: config.gpuType, count: site.gpus }]);
}

export function windScaling(config: StackConfig, site: Extract<StackSite, { kind: "wind" }>, wind: GridValueSeries): WindScaling {
  const sorted = [...wind.values].sort((a, b) => a - b);
  const atPercentile = Math.max(1e-9, linearPercentile(sorted, site.rightSizingPercentile));
  const wattsPerMw = stackSitePowerW(config, site) / atPercentile;
  return { wattsPerMw, peakW: sorted.at(-1)! * wattsPerMw };
}

/**
 * The fleet the local stack registers with the edge: its simulated sites at their ingress URLs,
 * one model and its variants (quality from Clover's Qwen2.5 family where they are its members, else
 * 1), DynamoLLM's 3x3 classes with SLOs at 5x the isolated latency of the largest variant on the
 * largest TP, and the configured policy with its registry entry's default weights. Wind sites take
 * their power from the forecasts the stack posts; the grid site's carbon comes from the local
 * Electricity Maps stand-in.
 */
export function localFleet(config: StackConfig, ingressUrls: Record<string, string>, windPeaksW: Record<string, number>): Fleet {
  const variants = config.variants.map((id) => ({ id, llm: variantLlmSpec(config.model, id) }));
  const llm = variants.reduce((a, b) => (b.llm.params > a.llm.params ? b : a)).llm;
  const gpu = gpuSpec(config.gpuType);
  const fastestTp = Math.max(...config.tps);
  return Fleet.parse({
    sites: config.sites.map((s) => ({
      id: s.id,
      region: s.region,
      ingressUrl: ingressUrls[s.id],
      gpus: [{ type: config.gpuType, count: s.gpus }],
      power:
        s.kind === "wind"
          ? { kind: "wind", series: { kind: "forecast", forecastId: `${s.id}-power` }, peakMw: windPeaksW[s.id]! / 1e6, rightSizingPercentile: s.rightSizingPercentile }
          : { kind: "grid", region: s.region, capW: stackSitePowerW(config, s) },
      carbon: s.kind === "wind" ? { kind: "fixed", gPerKwh: 11 } : { kind: "electricitymaps", zone: s.region },
      rttMs: {},
    })),
    models: [{ id: config.model }],
    variants: variants.map((v) => ({ model: config.model, id: v.id, quality: QWEN25_FAMILY.find((q) => q.variant.model === config.model && q.variant.id === v.id)?.variant.quality ?? 1, memoryGb: weightBytes(v.llm) / 1e9, parameterCount: v.llm.totalParams })),
    classScheme: { name: "dynamollm", inputEdges: [255, 1023], outputEdges: [99, 349], inputLabels: ["S", "M", "L"], outputLabels: ["S", "M", "L"] },
    classes: DYNAMOLLM_CLASS_LENGTHS.map((cls, i) => {
      const slo = isolatedLatencySlo(llm, gpu, cls, SLO_MULTIPLE, fastestTp);
      return { id: cls.classId, inputBin: Math.floor(i / 3), outputBin: i % 3, slo: { ttftMs: round(slo.ttftMs), tbtMs: round(slo.tbtMs) } };
    }),
    policy: { kind: config.policy, weights: POLICIES[config.policy].defaultWeights },
  });
}

const round = (ms: number) => Math.ceil(ms * 10) / 10;
