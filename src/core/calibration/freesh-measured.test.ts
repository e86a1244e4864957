import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { parseAzureTrace } from "../data/azure-trace.ts";
import { parseFreeshProfiles } from "../data/freesh-profiles.ts";
import { gpuSpecs } from "../model/gpu-specs.ts";
import { llmSpecs } from "../model/llm-specs.ts";
import { binLengths } from "../planning/freesh/serving-modes.ts";
import { freeshMeasuredPoints, summariseMeasured } from "./freesh-measured.ts";

const data = resolve(process.cwd(), "data");
const read = (path: string) => readFileSync(resolve(data, path), "utf8");
const profiles = parseFreeshProfiles(read("freesh/profiles.json"), "profiles.json");
const lengths = parseAzureTrace(read("azure-llm-2023/AzureLLMInferenceTrace_conv.csv"), "conv").requests;
const llm = llmSpecs["llama3-70b"];
const run = (scheduling: "prefill-first" | "chunked") => freeshMeasuredPoints(llm, profiles, lengths, { scheduling, requests: 200, seed: 3 });

describe("the engine model at FREESH's measured vLLM operating points", () => {
  const points = run("prefill-first");

  it("visits every (partition, type, mode) with a measured max QPS and requests of its bin in the trace", () => {
    let expected = 0;
    for (const p of Object.values(profiles.partitions)) {
      for (let r = 0; r < profiles.types.length; r++) {
        if (binLengths(lengths, p.thresholds_tokens, r).length === 0) continue;
        expected += p.max_qps[r]!.filter((q) => q > 0).length;
      }
    }
    expect(points).toHaveLength(expected);
    const summary = summariseMeasured(points);
    expect(Object.keys(summary).sort()).toEqual(["a100", "h100"]);
    expect(summary.a100!.points + summary.h100!.points).toBe(expected);
  });

  it("draws between idle and TDP on each of the mode's GPUs", () => {
    for (const p of points) {
      const gpu = gpuSpecs[p.mode.startsWith("H100") ? "H100-80GB" : "A100-80GB"];
      const gpus = Number(p.mode.split("x")[1]);
      expect(p.ours.powerW).toBeGreaterThanOrEqual(gpu.power.idleW * gpus);
      expect(p.ours.powerW).toBeLessThanOrEqual(gpu.tdpW * gpus);
    }
  });

  it("keeps up at no point whose rate needs more GEMM FLOPs than the GPUs' peak, and some of FREESH's rates do at the trace's lengths", () => {
    const beyond = points.filter((p) => p.gemmPeakShare > 1);
    expect(beyond.length).toBeGreaterThan(0);
    for (const p of beyond) expect(p.ours.keepsUp).toBe(false);
    expect(summariseMeasured(points).a100!.beyond_peak_flops).toBe(beyond.filter((p) => p.mode.startsWith("A100")).length);
  });

  it("with chunked prefill, decoding on H100 is interrupted less at the short-prompt points", () => {
    const chunked = run("chunked");
    const shortPrompts = (p: (typeof points)[number]) => p.mode === "H100x4" && p.type.startsWith("S");
    const before = points.filter(shortPrompts);
    const after = chunked.filter(shortPrompts);
    expect(before.length).toBeGreaterThan(0);
    after.forEach((p, i) => expect(p.ours.tbtMs).toBeLessThan(before[i]!.ours.tbtMs));
  });
});
