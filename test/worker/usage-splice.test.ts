import { describe, expect, it } from "vitest";
import { replaceTopLevelUsage } from "../../src/worker/usage-splice.ts";

const RECEIPT = { site: "eu-a", energy_j: 1.5 };

/** What the edge does with a site's body: parse it, amend the parsed usage, splice it back. */
function amend(text: string): { spliced: string | null; expected: unknown } {
  const body = JSON.parse(text) as { usage: Record<string, unknown> };
  body.usage.greenference = RECEIPT;
  return { spliced: replaceTopLevelUsage(text, body.usage), expected: body };
}

describe("replaceTopLevelUsage", () => {
  it.each([
    ["usage last (OpenAI)", '{"id":"c","choices":[{"index":0,"message":{"content":"hi"}}],"usage":{"prompt_tokens":1,"completion_tokens":2}}'],
    ["members after usage (vLLM)", '{"id":"c","choices":[],"usage":{"prompt_tokens":1},"prompt_logprobs":null,"kv_transfer_params":{"a":[1,{"b":"}"}]}}'],
    ["pretty-printed", '{\n  "id": "c",\n  "usage" :\t{ "prompt_tokens": 1 }\n}\n'],
    ["empty usage", '{"usage":{}}'],
    ["usage first, a long answer after it", `{"usage":{"prompt_tokens":1},"choices":[{"message":{"content":"${"x".repeat(500)} } ] {"}}]}`],
    ["a site's own receipt in usage", '{"usage":{"completion_tokens":2,"greenference":{"energy_j":9.25}}}'],
    ["the word usage in a string and a nested key", '{"choices":[{"message":{"content":"say \\"usage\\": {}","usage":{"x":1}}}],"usage":{"total_tokens":3}}'],
    ["a duplicate usage key (the last one counts)", '{"usage":{"prompt_tokens":1},"usage":{"prompt_tokens":2}}'],
  ])("splices into the top-level usage: %s", (_, text) => {
    const { spliced, expected } = amend(text);
    expect(spliced).not.toBeNull();
    expect(JSON.parse(spliced!)).toEqual(expected);
    // Only the usage value changed: what precedes it is the site's text byte for byte.
    expect(spliced!.startsWith(text.slice(0, text.lastIndexOf('"usage"')))).toBe(true);
  });

  it.each([
    ["a key ending in an escaped quote before usage", '{"usage":{"a":1},"k\\"usage":{"b":2}}'],
    ["an escaped key spelling usage after the last plain one", '{"usage":{"a":1},"\\u0075sage":{"b":2}}'],
    ["the last usage nested inside usage", '{"usage":{"prompt_tokens":1,"usage":{"x":1}}}'],
    ["the last usage nested in a later member", '{"usage":{"a":1},"extra":{"usage":{"b":2}}}'],
  ])("leaves it to a full re-serialisation when unsure: %s", (_, text) => {
    expect(amend(text).spliced).toBeNull();
  });
});
