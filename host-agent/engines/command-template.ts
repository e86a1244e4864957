import { EngineError } from "./engine.ts";

/**
 * Values a command template may use: `{weights}` (what the engine loads), `{served}` (the name it
 * serves), `{model}` (the fleet's API id), `{tp}`, `{port}`, `{host}`, `{variant}`, `{gpus}`,
 * `{role}` (`mixed`, `prefill` or `decode`), `{kvport}` (the first of the replica's own KV
 * handoff side-channel ports; 0 where it has none) and `{replica}` (the replica's number within its
 * instance). `{replica}` is the one value a plan's label gives: an engine whose command uses it
 * runs another argv under another replica number, so it is restarted, not kept, when a plan
 * renumbers it (see `ProcessEngine.canTakeLabel`).
 */
export interface TemplateValues {
  model: string;
  weights: string;
  served: string;
  tp: number;
  port: number;
  host: string;
  variant: string;
  /** Comma-separated GPU indices. */
  gpus: string;
  role: string;
  kvport: number;
  replica: number;
}

const PLACEHOLDER = /\{([a-z]+)\}/g;

/**
 * Turns an engine command template into an argv, without a shell: the template is split on
 * whitespace (double quotes keep a word with spaces together), then placeholders are replaced in
 * each word, so a value can never add arguments. An unknown placeholder is an error.
 *
 * @example
 * expandCommand("vllm serve {weights} --served-model-name {served} --port {port}", { model: "llama-8b", weights: "meta-llama/Llama-3.1-8B", served: "llama-8b", tp: 1, port: 8100, host: "127.0.0.1", variant: "base", gpus: "0", role: "mixed", kvport: 0, replica: 0 });
 * // ["vllm", "serve", "meta-llama/Llama-3.1-8B", "--served-model-name", "llama-8b", "--port", "8100"]
 */
export function expandCommand(template: string, values: TemplateValues): string[] {
  const words = splitWords(template);
  if (words.length === 0) throw new EngineError("the engine command template is empty");
  return words.map((word) =>
    word.replace(PLACEHOLDER, (_, name: string) => {
      if (!(name in values)) throw new EngineError(`unknown placeholder {${name}} in the engine command template; known: ${Object.keys(values).map((k) => `{${k}}`).join(", ")}`);
      return String(values[name as keyof TemplateValues]);
    }),
  );
}

function splitWords(template: string): string[] {
  const words: string[] = [];
  const re = /"([^"]*)"|(\S+)/g;
  for (let m = re.exec(template); m; m = re.exec(template)) words.push(m[1] ?? m[2]!);
  return words;
}
