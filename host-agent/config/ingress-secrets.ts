import { readFileSync } from "node:fs";
import type { AgentConfig } from "./agent-config.ts";

/** The ingress secrets, current first: from `ingressSecretFile` (one a line) or the config keys. */
export function ingressSecrets(config: Partial<Pick<AgentConfig, "ingressSecret" | "ingressSecretPrevious" | "ingressSecretFile">>): string[] {
  const fromFile = config.ingressSecretFile === undefined ? [] : readFileSync(config.ingressSecretFile, "utf8").split(/\r?\n/).map((l) => l.trim()).filter(Boolean);
  const secrets = [...fromFile, config.ingressSecret, config.ingressSecretPrevious].filter((s): s is string => s !== undefined);
  if (secrets.length === 0) throw new Error("the ingress needs its ingress secret: set ingressSecret (GREENFERENCE_INGRESS_SECRET) or ingressSecretFile");
  const short = secrets.find((s) => s.length < 32);
  if (short !== undefined) throw new Error(`an ingress secret in ${config.ingressSecretFile ?? "the config"} is shorter than 32 characters`);
  return [...new Set(secrets)];
}
