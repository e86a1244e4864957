import type { ChatCompletionRequest, CompletionRequest } from "../schemas/openai-request.ts";
import type { PromptShape } from "./token-estimate.ts";

/** What the token estimate reads from a chat body: texts (contents, names, tool calls and definitions), messages, images. */
export function chatPromptShape(body: ChatCompletionRequest): PromptShape {
  const texts: string[] = [];
  let images = 0;
  for (const m of body.messages) {
    if (typeof m.content === "string") texts.push(m.content);
    else if (Array.isArray(m.content)) {
      for (const part of m.content) {
        if (part.type === "text") texts.push(part.text as string);
        else if (part.type === "image_url") images++;
      }
    }
    if (m.name) texts.push(m.name);
    if (m.tool_calls !== undefined) texts.push(JSON.stringify(m.tool_calls));
  }
  if (body.tools) texts.push(JSON.stringify(body.tools));
  return { texts, messages: body.messages.length, images, tokenIds: 0 };
}

/** What the token estimate reads from a completions body: its texts, or the count of its token ids. */
export function completionPromptShape(body: CompletionRequest): PromptShape {
  const p = body.prompt;
  if (typeof p === "string") return { texts: [p], messages: 0, images: 0, tokenIds: 0 };
  if (p.every((x) => typeof x === "string")) return { texts: p as string[], messages: 0, images: 0, tokenIds: 0 };
  const ids = (p as (number | number[])[]).reduce<number>((n, x) => n + (Array.isArray(x) ? x.length : 1), 0);
  return { texts: [], messages: 0, images: 0, tokenIds: ids };
}

/**
 * Each prompt of a completions body on its own: a list of texts or of token-id lists is a batch
 * of prompts, which an engine answers one by one; a text or one token-id list is one prompt.
 * Their estimates add up to `completionPromptShape`'s.
 */
export function completionPromptShapes(body: CompletionRequest): PromptShape[] {
  const p = body.prompt;
  const text = (t: string): PromptShape => ({ texts: [t], messages: 0, images: 0, tokenIds: 0 });
  const ids = (n: number): PromptShape => ({ texts: [], messages: 0, images: 0, tokenIds: n });
  if (typeof p === "string") return [text(p)];
  if (p.every((x) => typeof x === "string")) return (p as string[]).map(text);
  if (p.every((x) => Array.isArray(x))) return (p as number[][]).map((x) => ids(x.length));
  return [ids(p.length)];
}
