import { describe, expect, it } from "vitest";
import { decodeTime } from "../model/iteration-time.ts";
import { gpuSpecs } from "../model/gpu-specs.ts";
import { llmSpecs } from "../model/llm-specs.ts";
import { decodeFreqSet, decodeTargetSelector, modelDecodeFreq } from "./decode-target.ts";

const gpu = gpuSpecs["H100-80GB"];
const llm = llmSpecs["llama3.1-8b"];
const policy = { mode: "policy", policy: "ecofreq", minMhz: 1005, maxMhz: 1980 } as const;

describe("decode target selection (EcoRoute on the performance model)", () => {
  it("uses the sweet spot and the top of the plan's bounds as EcoFreq's levels", () => {
    expect(decodeFreqSet(gpu, policy)).toEqual([1395, 1980]);
    expect(decodeFreqSet(gpu, { ...policy, maxMhz: 1200 })).toEqual([1200]);
    expect(decodeFreqSet(gpu, { mode: "locked", mhz: 1500 })).toEqual([1500]);
  });

  it("finds the batch where decode must step up to the top clock to meet 5 x the isolated TBT", () => {
    const freq = modelDecodeFreq({ llm, gpu, tp: 1 }, [1395, 1980]);
    const slo = 5 * decodeTime({ llm, gpu, tp: 1, mhz: 1980 }, 1, 0).ms;
    expect(freq(16, 16 * 600)).toBe(1395);
    expect(decodeTime({ llm, gpu, tp: 1, mhz: 1395 }, 16, 16 * 600).ms).toBeLessThanOrEqual(slo);
    expect(freq(400, 400 * 600)).toBe(1980);
    expect(decodeTime({ llm, gpu, tp: 1, mhz: 1395 }, 400, 400 * 600).ms).toBeGreaterThan(slo);
  });

  it("sends a request away from the replica it would push over the cliff (case 2) and round-robins on a level field (1a)", () => {
    const freq = modelDecodeFreq({ llm, gpu, tp: 1 }, [1395, 1980]);
    let edge = 1;
    while (freq(edge + 1, (edge + 1) * 601) === 1395) edge++;
    const select = decodeTargetSelector(freq);
    const atCliff = { key: "d#0", running: edge, kvTokens: edge * 601, free: 8 };
    const light = { key: "d#1", running: 10, kvTokens: 6010, free: 8 };
    // The H100's levels are 585 MHz apart, more than GreenServe's Δ = 500: case 2b; with a wider Δ, 2a.
    expect(select(600, [atCliff, light])).toEqual({ key: "d#1", rule: "2b" });
    expect(decodeTargetSelector(freq, { deltaMhz: 600 })(600, [atCliff, light])).toEqual({ key: "d#1", rule: "2a" });
    expect(select(600, [{ ...atCliff, running: edge - 1, kvTokens: (edge - 1) * 601 }, { ...atCliff, key: "d#1" }])).toEqual({ key: "d#0", rule: "2b" });
    const even = [light, { ...light, key: "d#2" }];
    expect([select(600, even), select(600, even)].map((c) => [c!.key, c!.rule])).toEqual([["d#1", "1a"], ["d#2", "1a"]]);
    expect(select(600, [{ ...light, free: 0 }])).toBeUndefined();
  });

  it("packs a level field onto the busiest replica with room in its tile when asked to (Greenference)", () => {
    const pack = decodeTargetSelector(modelDecodeFreq({ llm, gpu, tp: 1 }, [1395, 1980]), { pack: { tileRows: gpu.tileRows } });
    const busy = { key: "d#0", running: 30, kvTokens: 30 * 601, free: 8 };
    const light = { key: "d#1", running: 3, kvTokens: 3 * 601, free: 8 };
    expect([pack(600, [light, busy]), pack(600, [light, busy])]).toEqual([{ key: "d#0", rule: "1a" }, { key: "d#0", rule: "1a" }]);
    expect(pack(600, [light, { ...busy, free: 0 }])).toEqual({ key: "d#1", rule: "1a" });
  });
});
