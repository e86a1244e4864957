import { describe, expect, it } from "vitest";
import { loadAgentConfig } from "../config/load-agent-config.ts";
import { sglangFlavor, vllmFlavor } from "../engines/engine-flavors.ts";
import { kvHandoffOf } from "./hardware.ts";

const base = { site: "wind-a", edge: "http://127.0.0.1:1", token: "gfs_wind-a_0123456789abcdef" };
const handoff = (flags: Record<string, string>) => kvHandoffOf(loadAgentConfig({ flags: { ...base, ...flags } }));

describe("the KV handoff's words for vLLM and SGLang replicas", () => {
  it("is off unless turned on: a vLLM without NIXL would not start with the connector", () => {
    expect(handoff({ engine: "vllm" })).toEqual({});
    expect(handoff({ engine: "vllm", engineKvHandoff: "on" })).toEqual({ kvHandoffArgs: vllmFlavor.kvHandoffArgs });
    expect(handoff({ engine: "sglang" })).toEqual({});
    expect(handoff({ engine: "sglang", engineKvHandoff: "on" })).toEqual({ kvHandoffArgs: sglangFlavor.kvHandoffArgs });
  });

  it("takes an operator's words, which turn it on", () => {
    expect(handoff({ engine: "vllm", engineKvHandoffArgs: "--kv-transfer-config {served}.json" })).toEqual({ kvHandoffArgs: "--kv-transfer-config {served}.json" });
  });
});
