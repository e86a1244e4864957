import { describe, expect, it } from "vitest";
import { expandCommand } from "./command-template.ts";

const values = { model: "llama-8b", weights: "meta-llama/Llama-3.1-8B", served: "llama-8b", tp: 4, port: 8101, host: "127.0.0.1", variant: "fp8", gpus: "0,1,2,3", role: "mixed", kvport: 0, replica: 1 };

describe("expandCommand", () => {
  it("fills placeholders word by word, without a shell", () => {
    expect(expandCommand("vllm serve {weights} --served-model-name {served} --tensor-parallel-size {tp} --port {port}", values)).toEqual(["vllm", "serve", "meta-llama/Llama-3.1-8B", "--served-model-name", "llama-8b", "--tensor-parallel-size", "4", "--port", "8101"]);
    expect(expandCommand("vllm serve {weights} --log-file /var/log/vllm-{replica}.log", values)).toEqual(["vllm", "serve", "meta-llama/Llama-3.1-8B", "--log-file", "/var/log/vllm-1.log"]);
    expect(expandCommand('run "--name={model} {variant}" --bind={host}:{port}', { ...values, model: "a; rm -rf /" })).toEqual(["run", "--name=a; rm -rf / fp8", "--bind=127.0.0.1:8101"]);
  });

  it("names an unknown placeholder and refuses an empty template", () => {
    expect(() => expandCommand("vllm serve {modle}", values)).toThrow(/unknown placeholder \{modle\}/);
    expect(() => expandCommand("   ", values)).toThrow(/empty/);
  });
});
