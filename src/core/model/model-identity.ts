import type { Model } from "../schemas/fleet.ts";
import type { ModelIdentity } from "../schemas/model-identity.ts";
import { llmSpecs } from "./llm-specs.ts";

/** Whether the performance model knows `key`. */
export const knownPerfModel = (key: string): boolean => Object.hasOwn(llmSpecs, key);

/**
 * A fleet model's identity with its defaults filled: served name and weights default to the API
 * id; the performance-model key is the one the fleet names, else the id where the model knows it.
 *
 * @example
 * modelIdentity({ id: "llama-8b", weights: "meta-llama/Llama-3.1-8B-Instruct", perfModel: "llama3.1-8b" });
 * // { servedName: "llama-8b", weights: "meta-llama/Llama-3.1-8B-Instruct", perfModel: "llama3.1-8b" }
 */
export function modelIdentity(model: Pick<Model, "id" | "servedName" | "weights" | "perfModel">): ModelIdentity {
  const perfModel = model.perfModel ?? (knownPerfModel(model.id) ? model.id : undefined);
  return { servedName: model.servedName ?? model.id, weights: model.weights ?? model.id, ...(perfModel ? { perfModel } : {}) };
}

/** Identities of every fleet model, by API id. */
export function modelIdentities(models: readonly Pick<Model, "id" | "servedName" | "weights" | "perfModel">[]): Record<string, ModelIdentity> {
  return Object.fromEntries(models.map((m) => [m.id, modelIdentity(m)]));
}
