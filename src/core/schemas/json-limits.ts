/**
 * How deeply a JSON request body may nest. OpenAI bodies need a handful of levels (tool and
 * response-format JSON schemas a few more); a client's pass-through field nested thousands deep
 * would only reach code that recurses (serialisers, validators, engines) and break it there.
 */
export const MAX_JSON_DEPTH = 64;

/**
 * Whether `value` nests arrays and objects deeper than `maxDepth` (a bare value has depth 0, `[]`
 * depth 1). Iterative, so a value of any depth is measured without recursion, and it stops at the
 * first container past the limit.
 *
 * @example
 * jsonDepthExceeds(JSON.parse("[[[1]]]"), 2); // true
 */
export function jsonDepthExceeds(value: unknown, maxDepth = MAX_JSON_DEPTH): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (typeof v !== "object" || v === null) continue;
    if (depth + 1 > maxDepth) return true;
    const children = Array.isArray(v) ? v : Object.values(v);
    for (const child of children) if (typeof child === "object" && child !== null) stack.push([child, depth + 1]);
  }
  return false;
}

/**
 * Whether a Content-Type header names JSON: `application/json`, with or without parameters
 * (`; charset=utf-8`). Anything else, or none, is not a JSON body (415).
 *
 * @example
 * isJsonMediaType("application/json; charset=utf-8"); // true
 */
export function isJsonMediaType(contentType: string | null | undefined): boolean {
  if (!contentType) return false;
  const semicolon = contentType.indexOf(";");
  return (semicolon < 0 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase() === "application/json";
}
