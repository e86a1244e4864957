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

const NON_ASCII = /[\u0080-\uffff]/;

/**
 * Estimated tokens of one text: max(ceil(bytes / 4), words).
 *
 * This runs on every request at the edge over prompts of kilobytes, so it is one pass with no
 * data-dependent branch per character (word boundaries in prose are too irregular to predict):
 * a native regular-expression scan picks the loop, and pure ASCII, the common case, needs no byte
 * count at all.
 *
 * @example
 * estimateTextTokens("Hello, world!"); // 4 (cl100k: 4)
 */
export function estimateTextTokens(text: string): number {
  if (text.length === 0) return 0;
  if (NON_ASCII.test(text)) return unicodeTokens(text);
  return Math.max(Math.ceil(text.length / BYTES_PER_TOKEN), asciiWords(text));
}

/** Words of an ASCII text: a word starts at a non-space character after a space (or at the start). */
function asciiWords(text: string): number {
  let words = 0;
  let afterSpace = 1;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const space = +(c === 32) | +((c - 9) >>> 0 < 5);
    words += afterSpace & (space ^ 1);
    afterSpace = space;
  }
  return words;
}

/** max(ceil(bytes / 4), words) of any text, bytes and words as utf8Length and wordCount count them. */
function unicodeTokens(text: string): number {
  let bytes = text.length;
  let words = 0;
  let afterSpace = 1;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    // 1 byte below U+0080, 2 below U+0800, else 3; a surrogate pair is 3 + 3 - 2.
    bytes += ((0x7f - c) >>> 31) + ((0x7ff - c) >>> 31);
    if ((c & 0xfc00) === 0xd800 && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) bytes -= 2;
    const space = +(c === 32) | +((c - 9) >>> 0 < 5) | +(c === 0xa0) | +(c === 0x3000);
    words += afterSpace & (space ^ 1);
    afterSpace = space;
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
