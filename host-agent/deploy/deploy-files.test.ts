import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { EXAMPLE_SECRET_PREFIX } from "../config/agent-config.ts";
import { loadAgentConfig } from "../config/load-agent-config.ts";
import { DEFAULT_STATE_DIR } from "../state/state-dir.ts";

/**
 * The systemd unit and the settings file that docs/deploy.md installs, read as systemd reads them:
 * an operator who copies both and fills in the values gets an agent that starts.
 */
const unit = readFileSync(new URL("greenference-agent.service", import.meta.url), "utf8");
const envFile = readFileSync(new URL("agent.env.example", import.meta.url), "utf8");

/** `KEY=VALUE` lines of a systemd EnvironmentFile (comments and blank lines skipped, one layer of double quotes removed). */
function environmentFile(text: string): Record<string, string> {
  const lines = text.split("\n").filter((l) => l.trim() !== "" && !l.trimStart().startsWith("#"));
  return Object.fromEntries(
    lines.map((l) => {
      const at = l.indexOf("=");
      const value = l.slice(at + 1).trim();
      return [l.slice(0, at).trim(), value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : value];
    }),
  );
}

/** The values of `key=` lines in the unit's [Service] section. */
const serviceSettings = (key: string) => unit.split("\n").flatMap((l) => (l.startsWith(`${key}=`) ? [l.slice(key.length + 1)] : []));

describe("the agent's deploy files", () => {
  it("agent.env.example is refused while a secret is its placeholder, and loads once each is set", () => {
    const env = environmentFile(envFile);
    const placeholders = Object.keys(env).filter((k) => env[k]!.startsWith(EXAMPLE_SECRET_PREFIX));
    expect(placeholders.sort()).toEqual(["GREENFERENCE_CONTROL_TOKEN", "GREENFERENCE_INGRESS_SECRET", "GREENFERENCE_READ_TOKEN", "GREENFERENCE_TOKEN"]);
    const refusal = (() => {
      try {
        loadAgentConfig({ env, flags: {} });
      } catch (error) {
        return (error as Error).message;
      }
      return "loaded";
    })();
    for (const key of placeholders) expect(refusal).toMatch(new RegExp(`\\(${key}\\): still agent.env.example's placeholder`));
    const filled = { ...env, GREENFERENCE_TOKEN: `gfs_wind-north_${"ab".repeat(32)}`, GREENFERENCE_INGRESS_SECRET: `gfi_${"cd".repeat(32)}`, GREENFERENCE_READ_TOKEN: "1f".repeat(32), GREENFERENCE_CONTROL_TOKEN: "2e".repeat(32) };
    const config = loadAgentConfig({ env: filled, flags: {} });
    expect(config).toMatchObject({ site: "wind-north", gpu: "nvml", engine: "vllm", ingress: "127.0.0.1:9000", listen: "127.0.0.1:9400" });
    expect(config.ingressSecret).toBe(filled.GREENFERENCE_INGRESS_SECRET);
  });

  it("the unit has systemd create the state dir the agent opens, for the user it runs as", () => {
    const configured = environmentFile(envFile)["GREENFERENCE_STATE_DIR"];
    const stateDir = configured ?? DEFAULT_STATE_DIR;
    expect(serviceSettings("User")).toEqual(["greenference"]);
    expect(serviceSettings("StateDirectory").map((d) => `/var/lib/${d}`)).toEqual([stateDir]);
    expect(serviceSettings("WorkingDirectory")).toEqual([stateDir]);
  });
});
