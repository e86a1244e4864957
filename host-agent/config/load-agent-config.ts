import { readFileSync } from "node:fs";
import { AgentConfig, CONFIG_KEYS, envOf, flagOf, NUMERIC_KEYS, SECRET_KEYS, type AgentConfigKey } from "./agent-config.ts";

/** A configuration that does not validate; the message names each bad field and where it came from. */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
}

export interface ConfigSources {
  /** Flag values by config key (strings, as parsed from argv). */
  flags?: Partial<Record<AgentConfigKey, string>>;
  env?: NodeJS.ProcessEnv;
  /** Path of a JSON file with config keys. */
  file?: string;
}

type Origin = "flag" | "env" | "file";

/**
 * Builds the agent's configuration from flags > environment > config file > defaults, and
 * validates it with the one `AgentConfig` schema. Flag and environment values are strings: numeric
 * keys are converted first.
 *
 * @example
 * loadAgentConfig({ flags: { site: "wind-a" }, env: { GREENFERENCE_EDGE: "https://edge.example", GREENFERENCE_TOKEN: "gfs_wind-a_00" } });
 * // throws ConfigError: 'simSpeed (--sim-speed): Too small...' for a bad value
 */
export function loadAgentConfig(sources: ConfigSources): AgentConfig {
  const merged: Record<string, unknown> = {};
  const origin = new Map<string, Origin>();
  const put = (key: string, value: unknown, from: Origin) => {
    merged[key] = value;
    origin.set(key, from);
  };
  if (sources.file) for (const [key, value] of Object.entries(readConfigFile(sources.file))) put(key, value, "file");
  for (const key of CONFIG_KEYS) {
    const fromEnv = sources.env?.[envOf(key)];
    if (fromEnv !== undefined && fromEnv !== "") put(key, convert(key, fromEnv), "env");
  }
  for (const key of CONFIG_KEYS) {
    const fromFlag = sources.flags?.[key];
    if (fromFlag !== undefined) put(key, convert(key, fromFlag), "flag");
  }
  const parsed = AgentConfig.safeParse(merged);
  if (parsed.success) return parsed.data;
  const lines = parsed.error.issues.map((issue) => {
    const key = String(issue.path[0] ?? (issue.code === "unrecognized_keys" ? issue.keys.join(", ") : "config"));
    const from = origin.get(key);
    const where = from === "flag" ? `--${flagOf(key)}` : from === "env" ? envOf(key) : from === "file" ? `"${key}" in ${sources.file}` : `--${flagOf(key)} / ${envOf(key)}`;
    return `${key} (${where}): ${issue.message}`;
  });
  throw new ConfigError(`invalid agent configuration:\n  ${lines.join("\n  ")}`);
}

/** The configuration with secrets replaced, for printing. */
export function redactedConfig(config: AgentConfig): Record<string, unknown> {
  return Object.fromEntries(Object.entries(config).map(([k, v]) => [k, SECRET_KEYS.has(k as AgentConfigKey) && v !== undefined ? "<redacted>" : v]));
}

function convert(key: AgentConfigKey, value: string): unknown {
  if (!NUMERIC_KEYS.has(key)) return value;
  const n = Number(value.trim());
  return value.trim() === "" || Number.isNaN(n) ? value : n;
}

function readConfigFile(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new ConfigError(`cannot read the config file ${path}: ${(error as Error).message}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`the config file ${path} is not valid JSON: ${(error as Error).message}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new ConfigError(`the config file ${path} must hold one JSON object`);
  return value as Record<string, unknown>;
}
