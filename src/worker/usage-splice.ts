/**
 * Puts an amended `usage` object into a JSON response body without re-serialising the rest.
 *
 * The edge parses a site's JSON answer once (to validate it and read `usage`) and then only needs
 * to change `usage`. Re-serialising the whole body costs time in proportion to its size (long
 * completions, logprobs); replacing the `usage` value's span costs time in proportion to `usage`
 * and to what follows it, which in OpenAI-shaped bodies is little or nothing. The span is only
 * replaced when it is certainly the top-level member that `JSON.parse` read as `usage`; in every
 * other case the caller re-serialises.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/**
 * `text` with the value of its top-level `"usage"` member replaced by `JSON.stringify(usage)`, or
 * null when that member cannot be located with certainty. `text` must be valid JSON (the caller
 * has parsed it) whose top-level object has an object `usage`.
 *
 * Certain means: the last `"usage"` in the text is a key (its quote is not escaped), its value is
 * an object, and what follows the value closes the outermost object (so the key is a member of
 * it), with no escape sequence there that could spell a later duplicate `usage` key.
 *
 * @example
 * replaceTopLevelUsage('{"id":"x","usage":{"total_tokens":3}}', { total_tokens: 3, greenference: { energy_j: 1 } });
 * // '{"id":"x","usage":{"total_tokens":3,"greenference":{"energy_j":1}}}'
 */
export function replaceTopLevelUsage(text: string, usage: Record<string, unknown>): string | null {
  const key = text.lastIndexOf('"usage"');
  if (key < 0) return null;
  let backslashes = 0;
  for (let i = key - 1; i >= 0 && text.charCodeAt(i) === BACKSLASH; i--) backslashes++;
  if (backslashes % 2 === 1) return null;
  const colon = skipWhitespace(text, key + 7);
  if (text.charCodeAt(colon) !== COLON) return null;
  const start = skipWhitespace(text, colon + 1);
  if (text.charCodeAt(start) !== OPEN_BRACE) return null;
  const end = afterContainer(text, start);
  if (end < 0 || !closesOutermost(text, end)) return null;
  return text.slice(0, start) + JSON.stringify(usage) + text.slice(end);
}

function skipWhitespace(text: string, i: number): number {
  for (;;) {
    const c = text.charCodeAt(i);
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return i;
    i++;
  }
}

/** Index after the string that opens at `i` (a quote), or -1. */
function afterString(text: string, i: number): number {
  for (i++; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === BACKSLASH) i++;
    else if (c === QUOTE) return i + 1;
  }
  return -1;
}

/** Index after the object or array that opens at `start`, or -1. */
function afterContainer(text: string, start: number): number {
  let depth = 0;
  for (let i = start; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = afterString(text, i) - 1;
      if (i < 0) return -1;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
    else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return -1;
}

/**
 * True when, from `from` (just after a member's value), the text closes the object holding that
 * member and nothing but whitespace follows: the object is the outermost one. False at any
 * backslash on the way: an escaped key there might read as another `usage`.
 */
function closesOutermost(text: string, from: number): boolean {
  if (text.indexOf("\\", from) >= 0) return false;
  let depth = 0;
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = afterString(text, i) - 1;
      if (i < 0) return false;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
    else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      if (depth > 0) depth--;
      else return c === CLOSE_BRACE && skipWhitespace(text, i + 1) === text.length;
    }
  }
  return false;
}
