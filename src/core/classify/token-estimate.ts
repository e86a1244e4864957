/**
 * Input-token estimation at the edge, without a tokenizer (the Worker cannot afford one per model).
 *
 * Method: a text costs max(ceil(utf8Bytes / 4), words) tokens. Four bytes per token is the usual
 * rule of thumb for BPE tokenizers on English text (cl100k and Llama 3 average close to it); the
 * word count is a lower bound because a BPE tokenizer never merges across whitespace-separated
 * words, which keeps short-word and numeric text (where bytes / 4 undercounts) from falling into a
 * smaller class. Chat messages add OpenAI's documented framing: 3 tokens per message and 3 to prime
 * the reply. An image costs IMAGE_TOKENS. Token-id prompts (`/v1/completions` with arrays of ids)
 * are counted exactly.
 */

export const BYTES_PER_TOKEN = 4;
/** Per-message framing tokens (role and separators) in OpenAI's chat format. */
export const MESSAGE_OVERHEAD_TOKENS = 3;
/** Tokens that prime the assistant's reply in a chat prompt. */
export const REPLY_PRIMING_TOKENS = 3;
/** OpenAI's cost of one high-detail 1024x1024 image: 85 base + 4 tiles x 170. */
export const IMAGE_TOKENS = 765;

/** What the estimate needs to know about a prompt; the Worker extracts it from the request body. */
export interface PromptShape {
  /** Every piece of text the model will read (message contents, names, tool definitions as JSON). */
  texts: readonly string[];
  /** Chat messages (0 for a plain completion prompt). */
  messages: number;
  images: number;
  /** Prompt tokens given as ids, counted exactly. */
  tokenIds: number;
}

/** Length of `text` in UTF-8 bytes, computed from UTF-16 code units (no TextEncoder in the core). */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        i++;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}

/** Runs of non-whitespace characters. */
export function wordCount(text: string): number {
  let words = 0;
  let inWord = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const space = c === 32 || (c >= 9 && c <= 13) || c === 0xa0 || c === 0x3000;
    if (!space && !inWord) words++;
    inWord = !space;
  }
  return words;
}

/**
 * Estimated tokens of one text: max(ceil(bytes / 4), words).
 *
 * @example
 * estimateTextTokens("Hello, world!"); // 4 (cl100k: 4)
 */
export function estimateTextTokens(text: string): number {
  if (text.length === 0) return 0;
  // One pass for both counts: this runs on every request at the edge, over prompts of kilobytes.
  let bytes = 0;
  let words = 0;
  let inWord = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) {
      bytes += 1;
      const space = c === 32 || (c >= 9 && c <= 13);
      if (!space && !inWord) words++;
      inWord = !space;
      continue;
    }
    const space = c === 0xa0 || c === 0x3000;
    if (!space && !inWord) words++;
    inWord = !space;
    if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && text.charCodeAt(i + 1) >= 0xdc00 && text.charCodeAt(i + 1) <= 0xdfff) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return Math.max(Math.ceil(bytes / BYTES_PER_TOKEN), words);
}

/**
 * Estimated input tokens of a whole prompt (see the module comment for the method).
 *
 * @example
 * estimateInputTokens({ texts: ["Hi there"], messages: 1, images: 0, tokenIds: 0 }); // 2 + 3 + 3
 */
export function estimateInputTokens(prompt: PromptShape): number {
  let tokens = prompt.tokenIds + prompt.images * IMAGE_TOKENS;
  for (const text of prompt.texts) tokens += estimateTextTokens(text);
  if (prompt.messages > 0) tokens += prompt.messages * MESSAGE_OVERHEAD_TOKENS + REPLY_PRIMING_TOKENS;
  return tokens;
}
