import { describe, expect, it } from "vitest";
import { Fleet } from "../schemas/fleet.ts";
import { modelIdentities, modelIdentity } from "./model-identity.ts";

describe("modelIdentity", () => {
  it("serves and loads a model by its API id unless the fleet names them, and keys the performance model by the id where it knows it", () => {
    expect(modelIdentity({ id: "llama3.1-8b" as never })).toEqual({ servedName: "llama3.1-8b", weights: "llama3.1-8b", perfModel: "llama3.1-8b" });
    expect(modelIdentity({ id: "qwen-7b" as never, weights: "Qwen/Qwen2.5-7B-Instruct" })).toEqual({ servedName: "qwen-7b", weights: "Qwen/Qwen2.5-7B-Instruct" });
    expect(modelIdentities([{ id: "llama-8b" as never, servedName: "llama", weights: "meta-llama/Llama-3.1-8B-Instruct", perfModel: "llama3.1-8b" }])).toEqual({
      "llama-8b": { servedName: "llama", weights: "meta-llama/Llama-3.1-8B-Instruct", perfModel: "llama3.1-8b" },
    });
  });

  it("refuses a fleet whose perfModel the performance model does not know, naming the field", () => {
    const fleet = (perfModel?: string) => ({
      sites: [{ id: "a", region: "r", ingressUrl: "http://a.test", gpus: [{ type: "H100-80GB", count: 1 }], power: { kind: "fixed", capW: 1000 }, carbon: { kind: "fixed", gPerKwh: 100 } }],
      models: [{ id: "llama-8b", weights: "meta-llama/Llama-3.1-8B-Instruct", ...(perfModel ? { perfModel } : {}) }],
      variants: [{ model: "llama-8b", id: "base", quality: 1, memoryGb: 16, parameterCount: 8e9 }],
      classScheme: { name: "one", inputEdges: [], outputEdges: [], inputLabels: ["A"], outputLabels: ["B"] },
      classes: [{ id: "AB", inputBin: 0, outputBin: 0, slo: { ttftMs: 500, tbtMs: 50 } }],
      policy: { kind: "greenference", weights: { carbon: 1 } },
    });
    expect(Fleet.safeParse(fleet("llama3.1-8b")).success).toBe(true);
    expect(Fleet.safeParse(fleet()).success).toBe(true);
    const bad = Fleet.safeParse(fleet("llama-9000"));
    expect(bad.success).toBe(false);
    expect(bad.error!.issues).toEqual([expect.objectContaining({ path: ["models", 0, "perfModel"], message: expect.stringContaining('does not know "llama-9000"') })]);
  });
});
