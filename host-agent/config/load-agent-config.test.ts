import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { envOf, flagOf } from "./agent-config.ts";
import { ingressSecrets } from "./ingress-secrets.ts";
import { ConfigError, loadAgentConfig, redactedConfig } from "./load-agent-config.ts";

const dir = mkdtempSync(join(tmpdir(), "agent-config-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = (body: unknown) => {
  const path = join(dir, `c${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(path, typeof body === "string" ? body : JSON.stringify(body));
  return path;
};
const base = { site: "wind-a", edge: "https://edge.example", token: "gfs_wind-a_00ff" };
const SECRET = `gfi_${"ab".repeat(32)}`;

/** The message of the ConfigError that loading from `sources` throws (failing the test when it loads). */
function configErrorOf(sources: Parameters<typeof loadAgentConfig>[0]): string {
  try {
    loadAgentConfig(sources);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error("expected a ConfigError");
}

describe("loadAgentConfig", () => {
  it("names flags and variables after the keys", () => {
    expect(flagOf("engineCommand")).toBe("engine-command");
    expect(envOf("engineCommand")).toBe("GREENFERENCE_ENGINE_COMMAND");
  });

  it("takes flags over environment over file over defaults", () => {
    const path = file({ ...base, engine: "sglang", simSpeed: 3, heartbeatMs: 2000, engineCommand: "from-file {model}" });
    const config = loadAgentConfig({ file: path, env: { GREENFERENCE_ENGINE_COMMAND: "from-env {model}", GREENFERENCE_HEARTBEAT_MS: "3000" }, flags: { heartbeatMs: "4000" } });
    expect(config).toMatchObject({ site: "wind-a", engine: "sglang", simSpeed: 3, engineCommand: "from-env {model}", heartbeatMs: 4000, gpu: "nvml", planPollMs: 5000, enginePortBase: 8100 });
  });

  it("reads everything from the environment", () => {
    const config = loadAgentConfig({ env: { GREENFERENCE_SITE: "grid-b", GREENFERENCE_EDGE: "http://127.0.0.1:8787", GREENFERENCE_TOKEN: "t", GREENFERENCE_GPU: "sim", GREENFERENCE_ENGINE: "sim", GREENFERENCE_SIM_GPUS: "4" } });
    expect(config).toMatchObject({ site: "grid-b", gpu: "sim", engine: "sim", simGpus: 4 });
  });

  it("names the bad field and where its value came from", () => {
    expect(configErrorOf({ flags: { ...base, simSpeed: "fast" } })).toMatch(/simSpeed \(--sim-speed\): .*number/);
    expect(configErrorOf({ flags: base, env: { GREENFERENCE_GPU: "cuda" } })).toMatch(/gpu \(GREENFERENCE_GPU\): .*"nvml"/);
    expect(configErrorOf({ file: file({ ...base, enginePortBase: 70000 }) })).toMatch(/enginePortBase \("enginePortBase" in .*\.json\): Too big/);
    expect(configErrorOf({ file: file({ ...base, colour: "green" }) })).toMatch(/colour .*Unrecognized key/);
    expect(configErrorOf({ flags: { edge: base.edge, token: base.token } })).toMatch(/site \(--site \/ GREENFERENCE_SITE\)/);
    expect(configErrorOf({ flags: { ...base, engine: "sim" } })).toMatch(/engine \(--engine\): the simulated engine runs on simulated GPUs/);
    expect(configErrorOf({ flags: { ...base, listen: "127.0.0.1:9400", readToken: "r".repeat(16) } })).toMatch(/controlToken .*required when the local API listens/);
    expect(configErrorOf({ flags: { ...base, listen: "localhost" } })).toMatch(/listen \(--listen\): host:port/);
    expect(configErrorOf({ file: file("{not json") })).toMatch(/not valid JSON/);
    expect(configErrorOf({ file: join(dir, "missing.json") })).toMatch(/cannot read the config file/);
  });

  it("configures the site gateway: ingress, scheduler and queue bounds, with defaults", () => {
    expect(loadAgentConfig({ flags: base })).toMatchObject({ scheduler: "fifo-rr", gatewayReplicaConcurrency: 64, gatewayQueueMax: 1024, gatewayQueueWaitMs: 30_000 });
    expect(loadAgentConfig({ flags: base }).ingress).toBeUndefined();
    const config = loadAgentConfig({ flags: { ...base, ingress: "0.0.0.0:9000", scheduler: "llf" }, env: { GREENFERENCE_GATEWAY_REPLICA_CONCURRENCY: "4", GREENFERENCE_INGRESS_SECRET: SECRET }, file: file({ gatewayQueueWaitMs: 5000 }) });
    expect(config).toMatchObject({ ingress: "0.0.0.0:9000", ingressSecret: SECRET, scheduler: "llf", gatewayReplicaConcurrency: 4, gatewayQueueWaitMs: 5000, gatewayIdleTimeoutMs: 60_000, gatewayMaxHeldBytes: 256 * 1024 * 1024 });
  });

  it("bounds how long a request body may go without a byte: 10 s by default, from a flag, the environment or the file", () => {
    expect(loadAgentConfig({ flags: base }).requestBodyIdleTimeoutMs).toBe(10_000);
    expect(loadAgentConfig({ flags: { ...base, requestBodyIdleTimeoutMs: "2500" } }).requestBodyIdleTimeoutMs).toBe(2500);
    expect(loadAgentConfig({ flags: base, env: { GREENFERENCE_REQUEST_BODY_IDLE_TIMEOUT_MS: "3000" } }).requestBodyIdleTimeoutMs).toBe(3000);
    expect(loadAgentConfig({ file: file({ ...base, requestBodyIdleTimeoutMs: 4000 }) }).requestBodyIdleTimeoutMs).toBe(4000);
    expect(configErrorOf({ flags: { ...base, requestBodyIdleTimeoutMs: "0" } })).toMatch(/requestBodyIdleTimeoutMs \(--request-body-idle-timeout-ms\): Too small/);
  });

  it("needs the ingress secret when the ingress listens, from the environment, the config or a file", () => {
    expect(() => loadAgentConfig({ flags: { ...base, ingress: "127.0.0.1:9000" } })).toThrow(/ingressSecret .*required when the ingress listens/);
    expect(() => loadAgentConfig({ flags: { ...base, ingress: "127.0.0.1:9000" }, env: { GREENFERENCE_INGRESS_SECRET: "short" } })).toThrow(/at least 32 characters/);
    const current = join(dir, "ingress-secret");
    const previous = join(dir, "ingress-secret-previous");
    writeFileSync(current, `${SECRET}\n`);
    writeFileSync(previous, "p".repeat(40));
    const fromFiles = loadAgentConfig({ flags: { ...base, ingress: "127.0.0.1:9000", ingressSecretFile: current, ingressSecretPreviousFile: previous } });
    expect(ingressSecrets(fromFiles)).toEqual([SECRET, "p".repeat(40)]);
    writeFileSync(current, "too-short\n");
    expect(() => loadAgentConfig({ flags: { ...base, ingress: "127.0.0.1:9000", ingressSecretFile: current } })).toThrow(/at least 32 characters/);
    expect(redactedConfig(loadAgentConfig({ flags: { ...base, ingress: "127.0.0.1:9000", ingressSecret: SECRET } }))).toMatchObject({ ingressSecret: "<redacted>" });
  });

  it("names a bad gateway setting", () => {
    const bad = (flags: Record<string, string>) => configErrorOf({ flags: { ...base, ...flags } });
    expect(bad({ scheduler: "edf" })).toMatch(/scheduler \(--scheduler\): .*"fifo-rr"\|"llf"/);
    expect(bad({ ingress: "9000", ingressSecret: SECRET })).toMatch(/ingress \(--ingress\): host:port/);
    expect(bad({ ingress: "127.0.0.1:99999", ingressSecret: SECRET })).toMatch(/ingress .*port up to 65535/);
    expect(bad({ gatewayReplicaConcurrency: "0" })).toMatch(/gatewayReplicaConcurrency \(--gateway-replica-concurrency\): Too small/);
    expect(bad({ ingress: "127.0.0.1:9400", ingressSecret: SECRET, listen: "127.0.0.1:9400", readToken: "r".repeat(16), controlToken: "c".repeat(16) })).toMatch(/ingress .*must differ from listen/);
  });

  it("reads each secret from a file named by <secret>File, trimmed, from any source", () => {
    const secret = (name: string, text: string) => {
      writeFileSync(join(dir, name), text);
      return join(dir, name);
    };
    const token = secret("token", "  gfs_wind-a_f11e\n");
    const read = secret("read", "r".repeat(16) + "\n");
    writeFileSync(join(dir, "control"), "c".repeat(16));
    const config = loadAgentConfig({
      flags: { site: "wind-a", edge: base.edge, tokenFile: token, listen: "127.0.0.1:0" },
      env: { GREENFERENCE_READ_TOKEN_FILE: read },
      file: file({ controlTokenFile: "control" }),
    });
    expect(config).toMatchObject({ token: "gfs_wind-a_f11e", readToken: "r".repeat(16), controlToken: "c".repeat(16) });
    expect(Object.keys(config)).not.toContain("tokenFile");
    expect(loadAgentConfig({ flags: { site: "wind-a", edge: base.edge }, env: { GREENFERENCE_TOKEN_FILE: token } }).token).toBe("gfs_wind-a_f11e");
  });

  it("names the option and the path of a secret file it cannot use", () => {
    const missing = join(dir, "no-such-token");
    expect(configErrorOf({ flags: { site: "wind-a", edge: base.edge, tokenFile: missing } })).toContain(`tokenFile (--token-file): cannot read ${missing}: ENOENT`);
    expect(configErrorOf({ flags: { site: "wind-a", edge: base.edge }, env: { GREENFERENCE_TOKEN_FILE: dir } })).toMatch(/tokenFile \(GREENFERENCE_TOKEN_FILE\): cannot read .*EISDIR/);
    writeFileSync(join(dir, "blank"), " \n");
    expect(configErrorOf({ flags: { site: "wind-a", edge: base.edge, tokenFile: join(dir, "blank") } })).toContain(`tokenFile (--token-file): ${join(dir, "blank")} is empty`);
    expect(configErrorOf({ flags: { ...base, tokenFile: join(dir, "blank") } })).toContain("token (--token): give --token or --token-file, not both");
    writeFileSync(join(dir, "short"), "short");
    expect(configErrorOf({ flags: { ...base, listen: "127.0.0.1:0", readTokenFile: join(dir, "short"), controlToken: "c".repeat(16) } })).toContain(
      `readToken (read from ${join(dir, "short")}, named by --read-token-file): at least 16 characters`,
    );
  });

  it("redacts secrets for printing", () => {
    const config = loadAgentConfig({ flags: { ...base, listen: "127.0.0.1:0", readToken: "r".repeat(16), controlToken: "c".repeat(16) } });
    expect(redactedConfig(config)).toMatchObject({ token: "<redacted>", readToken: "<redacted>", controlToken: "<redacted>", listen: "127.0.0.1:0" });
  });
  it("refuses a period past Node's longest timer, which would fire at once, over and over", () => {
    expect(configErrorOf({ file: file(base), flags: { heartbeatMs: "3000000000" } })).toMatch(/heartbeatMs \(--heartbeat-ms\): at most 2147483647 ms/);
    expect(configErrorOf({ file: file(base), flags: { engineAdoptWindowMs: "1e15" } })).toMatch(/engineAdoptWindowMs \(--engine-adopt-window-ms\): at most 2147483647 ms/);
  });
});
