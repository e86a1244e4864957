import { placeholderText } from "./sse-writer.ts";

/**
 * What the simulated engine does with OpenAI's sampling parameters. It writes placeholder text, so
 * `seed`, `temperature`, `top_p` and the penalties are honoured trivially (the output is the same
 * for every seed); `stop` ends the text before the first stop string and `n` runs that many
 * sequences (for each prompt of a batch), as an engine would; the rest (best_of, log probabilities, tools, structured output,
 * echo, suffix, logit bias) it cannot honour and refuses with a 400 that names the parameter (a
 * real engine gets them).
 */
export function unsupportedParameter(body: Record<string, unknown>): { param: string; message: string } | null {
  const set = (v: unknown) => v !== undefined && v !== null && v !== false && !(Array.isArray(v) && v.length === 0);
  const refuse = (param: string, what: string) => ({ param, message: `The simulated engine does not support ${what}; remove '${param}' (engines such as vLLM honour it).` });
  if (typeof body.best_of === "number" && body.best_of > 1) return refuse("best_of", "best_of > 1");
  for (const param of ["tools", "tool_choice", "functions", "function_call"]) if (set(body[param])) return refuse(param, "tool calling");
  for (const param of ["logprobs", "top_logprobs"]) if (set(body[param])) return refuse(param, "log probabilities");
  const format = body.response_format as { type?: unknown } | null | undefined;
  if (format && format.type !== "text") return refuse("response_format", "structured output");
  if (body.echo === true) return refuse("echo", "echoing the prompt");
  if (typeof body.suffix === "string" && body.suffix !== "") return refuse("suffix", "a suffix");
  if (body.logit_bias && Object.keys(body.logit_bias).length > 0) return refuse("logit_bias", "logit bias");
  return null;
}

/** Where the output stops: the tokens the engine generates and the characters of their text returned. */
export interface StopCut {
  tokens: number;
  chars: number;
}

/**
 * The cut `stop` makes in the placeholder text of `maxTokens` tokens: the text ends before the
 * earliest stop string (which is not returned), and the engine generates only the tokens up to
 * there (at least one). null when no stop string occurs: the text runs to `maxTokens`.
 */
export function stopCut(maxTokens: number, stop: string | readonly string[] | null | undefined): StopCut | null {
  const stops = (typeof stop === "string" ? [stop] : (stop ?? [])).filter((s) => s.length > 0);
  if (stops.length === 0) return null;
  const text = placeholderText(0, maxTokens);
  let at = Infinity;
  for (const s of stops) {
    const i = text.indexOf(s);
    if (i >= 0 && i < at) at = i;
  }
  if (at === Infinity) return null;
  // Tokens whose text begins before the cut (each token after the first begins with a space).
  let tokens = 0;
  for (let pos = 0; tokens < maxTokens && pos < at; tokens++) pos += placeholderText(tokens, 1).length;
  return { tokens: Math.max(1, tokens), chars: at };
}
