import type { AgentConfig } from "./agent-config.ts";

/**
 * The ingress secrets the gateway accepts, current first: `ingressSecret` and, while a rotation
 * overlaps, `ingressSecretPrevious` (each also from a file: `ingressSecretFile`, `ingressSecretPreviousFile`).
 */
export function ingressSecrets(config: Partial<Pick<AgentConfig, "ingressSecret" | "ingressSecretPrevious">>): string[] {
  const secrets = [config.ingressSecret, config.ingressSecretPrevious].filter((s): s is string => s !== undefined);
  if (secrets.length === 0) throw new Error("the ingress needs its ingress secret: set ingressSecret (GREENFERENCE_INGRESS_SECRET or --ingress-secret-file)");
  return [...new Set(secrets)];
}
