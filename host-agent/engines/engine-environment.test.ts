import { describe, expect, it } from "vitest";
import { engineEnvironment } from "./engine-environment.ts";

describe("engineEnvironment", () => {
  it("drops the agent's GREENFERENCE_* variables and any variable holding one of its secrets", () => {
    const env = engineEnvironment(
      {
        PATH: "/usr/bin",
        HF_TOKEN: "hf_model_download",
        GREENFERENCE_TOKEN: "gfs_a_00",
        GREENFERENCE_CONTROL_TOKEN_FILE: "/etc/greenference/control",
        GREENFERENCE_ENGINE_COMMAND: "vllm serve {model}",
        SITE_TOKEN: "gfs_a_00\n",
        READ: "r".repeat(16),
      },
      ["gfs_a_00", "r".repeat(16), ""],
    );
    expect(env).toEqual({ PATH: "/usr/bin", HF_TOKEN: "hf_model_download" });
  });
});
