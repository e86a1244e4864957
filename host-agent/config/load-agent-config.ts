import { readFileSync } from "node:fs";
import { dirname } from "node:path";
import { AgentConfig, CONFIG_KEYS, envOf, flagOf, NUMERIC_KEYS, SECRET_KEYS, type AgentConfigKey, type SecretFileKey } from "./agent-config.ts";
import { readSecretFiles, SECRET_FILE_KEYS, type SecretFileOrigin } from "./secret-files.ts";

/** A configuration that does not validate; the message names each bad field and where it came from. */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
}

export interface ConfigSources {
  /** Flag values by config key (strings, as parsed from argv), `<secret>File` keys included. */
  flags?: Partial<Record<AgentConfigKey | SecretFileKey, string>>;
  env?: NodeJS.ProcessEnv;
  /** Path of a JSON file with config keys. */
  file?: string;
}

type Level = "file" | "env" | "flag";
type Origin = { level: Level; secretFile?: SecretFileOrigin };

/**
 * Builds the agent's configuration from flags > environment > config file > defaults, and
 * validates it with the one `AgentConfig` schema. Flag and environment values are strings: numeric
 * keys are converted first. Each secret may instead name a file that holds it (`tokenFile`,
 * `--token-file`, GREENFERENCE_TOKEN_FILE), read and trimmed here.
 *
 * @example
 * loadAgentConfig({ flags: { site: "wind-a", tokenFile: "/etc/greenference/token" }, env: { GREENFERENCE_EDGE: "https://edge.example" } });
 * // throws ConfigError: 'simSpeed (--sim-speed): Too small...' for a bad value
 */
export function loadAgentConfig(sources: ConfigSources): AgentConfig {
  const merged: Record<string, unknown> = {};
  const origin = new Map<string, Origin>();
  const where = (key: string, level: Level | undefined) =>
    level === "flag" ? `--${flagOf(key)}` : level === "env" ? envOf(key) : level === "file" ? `"${key}" in ${sources.file}` : `--${flagOf(key)} / ${envOf(key)}`;
  const problems: string[] = [];
  for (const [level, values] of levels(sources)) {
    const read = readSecretFiles(values, (key) => where(key, level), level === "file" && sources.file ? dirname(sources.file) : undefined);
    problems.push(...read.problems);
    for (const [key, value] of Object.entries(read.values)) {
      merged[key] = value;
      origin.set(key, { level, secretFile: read.origins.get(key as AgentConfigKey) });
    }
  }
  if (problems.length > 0) throw new ConfigError(`invalid agent configuration:\n  ${problems.join("\n  ")}`);
  const parsed = AgentConfig.safeParse(merged);
  if (parsed.success) return parsed.data;
  const lines = parsed.error.issues.map((issue) => {
    const key = String(issue.path[0] ?? (issue.code === "unrecognized_keys" ? issue.keys.join(", ") : "config"));
    const from = origin.get(key);
    const place = from?.secretFile ? `read from ${from.secretFile.path}, named by ${where(from.secretFile.fileKey, from.level)}` : where(key, from?.level);
    return `${key} (${place}): ${issue.message}`;
  });
  throw new ConfigError(`invalid agent configuration:\n  ${lines.join("\n  ")}`);
}

/** The configuration with secrets replaced, for printing. */
export function redactedConfig(config: AgentConfig): Record<string, unknown> {
  return Object.fromEntries(Object.entries(config).map(([k, v]) => [k, SECRET_KEYS.has(k as AgentConfigKey) && v !== undefined ? "<redacted>" : v]));
}

/** Each source's values by key, lowest precedence first. */
function levels(sources: ConfigSources): [Level, Record<string, unknown>][] {
  const keys = [...CONFIG_KEYS, ...SECRET_FILE_KEYS];
  const pick = (get: (key: string) => string | undefined) =>
    Object.fromEntries(keys.flatMap((key) => {
      const value = get(key);
      return value === undefined ? [] : [[key, convert(key, value)]];
    }));
  return [
    ["file", sources.file ? readConfigFile(sources.file) : {}],
    ["env", pick((key) => (sources.env?.[envOf(key)] === "" ? undefined : sources.env?.[envOf(key)]))],
    ["flag", pick((key) => sources.flags?.[key as AgentConfigKey])],
  ];
}

function convert(key: string, value: string): unknown {
  if (!NUMERIC_KEYS.has(key as AgentConfigKey)) return value;
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
