import { readFileSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { SECRET_KEYS, secretFileKey, type AgentConfigKey, type SecretFileKey } from "./agent-config.ts";

/** Every `<secret>File` option, e.g. tokenFile. */
export const SECRET_FILE_KEYS: readonly SecretFileKey[] = [...SECRET_KEYS].map(secretFileKey);

/** A secret that came from a file: which option named the file, and the file. */
export interface SecretFileOrigin {
  fileKey: SecretFileKey;
  path: string;
}

/**
 * Replaces each `<secret>File` entry of one configuration source (flags, environment or config
 * file) with the secret read from that file, trimmed, so secrets need not appear on a command
 * line (`ps` shows every process's). `where` names an option as that source spells it, for errors;
 * a relative path is taken from `baseDir`. Throws with the option and path when the file cannot be
 * read or is empty, or when the same source gives both the secret and its file.
 *
 * @example
 * readSecretFiles({ tokenFile: "/etc/greenference/token" }, (k) => `--${k}`); // { values: { token: "gfs_..." }, origins: Map { "token" => {...} } }
 */
export function readSecretFiles(
  source: Record<string, unknown>,
  where: (key: string) => string,
  baseDir = process.cwd(),
): { values: Record<string, unknown>; origins: Map<AgentConfigKey, SecretFileOrigin>; problems: string[] } {
  const values = { ...source };
  const origins = new Map<AgentConfigKey, SecretFileOrigin>();
  const problems: string[] = [];
  for (const key of SECRET_KEYS) {
    const fileKey = secretFileKey(key);
    const given = values[fileKey];
    if (given === undefined) continue;
    delete values[fileKey];
    if (typeof given !== "string" || given === "") {
      problems.push(`${fileKey} (${where(fileKey)}): the path of a file holding ${key}`);
      continue;
    }
    if (values[key] !== undefined) {
      problems.push(`${key} (${where(key)}): give ${where(key)} or ${where(fileKey)}, not both`);
      continue;
    }
    const path = isAbsolute(given) ? given : resolve(baseDir, given);
    let text: string;
    try {
      text = readFileSync(path, "utf8").trim();
    } catch (error) {
      problems.push(`${fileKey} (${where(fileKey)}): cannot read ${path}: ${(error as Error).message}`);
      continue;
    }
    if (text === "") {
      problems.push(`${fileKey} (${where(fileKey)}): ${path} is empty`);
      continue;
    }
    values[key] = text;
    origins.set(key, { fileKey, path });
  }
  return { values, origins, problems };
}
