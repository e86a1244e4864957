import { describe, expect, it } from "vitest";
import { smallStackConfig, StackConfig } from "./stack-config.ts";

describe("smallStackConfig", () => {
  it("is the default stack cut to three sites of 4 GPUs on a free port, with faster engines", () => {
    const small = smallStackConfig();
    const defaults = StackConfig.parse({});
    expect(small.sites.map((s) => [s.id, s.kind, s.region, s.gpus])).toEqual(defaults.sites.map((s) => [s.id, s.kind, s.region, 4]));
    expect(small.sites.filter((s) => s.kind === "wind").map((s) => s.rightSizingPercentile)).toEqual([20, 20]);
    expect(small).toMatchObject({ edgePort: 0, engineSpeed: 10 });
    const withoutScale = ({ sites: _sites, edgePort: _port, engineSpeed: _speed, ...rest }: StackConfig) => rest;
    expect(withoutScale(small)).toEqual(withoutScale(defaults));
  });

  it("takes what the caller gives over its own settings, checked as any stack config is", () => {
    const config = smallStackConfig({ model: "llama3.1-8b", tps: [1, 2], engineSpeed: 4, sites: [{ kind: "grid", id: "g", region: "CISO", gpus: 2 }] });
    expect(config).toMatchObject({ model: "llama3.1-8b", tps: [1, 2], engineSpeed: 4, sites: [{ id: "g", gpus: 2 }] });
    expect(() => smallStackConfig({ engineSpeed: -1 })).toThrow();
  });
});

describe("StackConfig", () => {
  it("refuses a misspelt key (it would run on the default silently) and a model the performance model does not know", () => {
    const errorOf = (raw: unknown) => {
      const parsed = StackConfig.safeParse(raw);
      return parsed.success ? "parsed" : parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
    };
    expect(errorOf({ loadRPS: 50 })).toMatch(/Unrecognized key: "loadRPS"/);
    expect(errorOf({ sites: [{ kind: "grid", id: "g", region: "CISO", gpu: 2 }] })).toMatch(/Unrecognized key: "gpu"/);
    expect(errorOf({ model: "gpt-9" })).toMatch(/^model: unknown model 'gpt-9'/);
    expect(errorOf({ model: "qwen2.5", variants: ["7b", "70b"] })).toMatch(/^model: unknown model 'qwen2.5'/);
    expect(errorOf({ model: "qwen2.5", variants: ["7b", "14b"] })).toBe("parsed");
  });
});
