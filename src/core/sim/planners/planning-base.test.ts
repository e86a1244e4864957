import { describe, expect, it } from "vitest";
import { gpuSpecs } from "../../model/gpu-specs.ts";
import { llmSpecs } from "../../model/llm-specs.ts";
import { PlanningInput, PlanningSlot } from "../../planning/planning-input.ts";
import { DYNAMOLLM_CLASS_LENGTHS } from "../../profiling/class-lengths.ts";
import { isolatedLatencySlo } from "../../profiling/isolated-slo.ts";
import { virtualProfile } from "../../profiling/virtual-profiler.ts";
import type { ClassId, SiteId } from "../../schemas/ids.ts";
import type { ProfileRow } from "../../schemas/profile.ts";
import type { PlanningContext } from "../fleet/fleet-types.ts";
import { planningBase, validatedProfile } from "./planning-base.ts";

const gpu = gpuSpecs["H100-80GB"];
const llm = llmSpecs["llama2-70b"];
const ss = DYNAMOLLM_CLASS_LENGTHS.find((c) => c.classId === "SS")!;
const profile = virtualProfile({ llm, gpu, tps: [8], clocksMhz: [1980], classes: [ss], loadFractions: [0.1, 0.3], requestsPerPoint: 20, seed: 2 }).rows;
const scheme = { name: "1x1", inputEdges: [], outputEdges: [], inputLabels: ["S"], outputLabels: ["S"] };
const ctx = (sites: PlanningContext["sites"]): PlanningContext => ({
  nowS: 900,
  periodS: 900,
  sites,
  demandRps: { SS: 2 } as Record<ClassId, number>,
  profile,
  slo: { SS: isolatedLatencySlo(llm, gpu, ss, 5) } as PlanningContext["slo"],
  model: llm.id,
});
const site = (id: string) => ({ id: id as SiteId, gpu, gpus: 64, availableW: 1e6, carbonGPerKwh: 11 });

describe("the simulator's planning input", () => {
  it("parses a slot into what PlanningInput.parse gives for the whole input", () => {
    const raw = { ...planningBase(ctx([site("a"), site("b")]), scheme), version: 3, horizonMs: 900_000 };
    const slot = { ...PlanningSlot.parse(raw), profile: validatedProfile(profile) };
    expect(slot).toEqual(PlanningInput.parse({ ...raw, profile }));
  });

  it("still refuses a slot with two sites of one id", () => {
    const raw = { ...planningBase(ctx([site("a"), site("a")]), scheme), version: 3 };
    expect(() => PlanningSlot.parse(raw)).toThrow(/duplicate site id/);
  });

  it("validates a run's profile table once, and refuses a bad one naming the field", () => {
    expect(validatedProfile(profile)).toBe(validatedProfile(profile));
    const bad = [{ ...profile[0]!, tp: 0 }] as ProfileRow[];
    expect(() => validatedProfile(bad)).toThrow(/tp/);
  });
});
