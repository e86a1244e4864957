import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { errorParam, leadingIssue } from "./issue-param.ts";
import { ChatCompletionRequest, CompletionRequest } from "./openai-request.ts";

/** The param and message a body's error would answer with, or "ok". */
function refusal(schema: z.ZodType, body: unknown): string {
  const result = schema.safeParse(body);
  return result.success ? "ok" : `${errorParam(result.error)}: ${leadingIssue(result.error)!.message}`;
}

const chat = (over: Record<string, unknown>) => ({ model: "m", messages: [{ role: "user", content: "hi" }], ...over });
const completion = (over: Record<string, unknown>) => ({ model: "m", prompt: "hi", ...over });

/** Every union reachable from `schema`: its path, and whether it has a message of its own. */
function unionsOf(schema: z.core.$ZodType, path = "", found: { path: string; ownMessage: boolean }[] = []): { path: string; ownMessage: boolean }[] {
  const def = schema._zod.def as unknown as Record<string, unknown>;
  if (def.type === "union") found.push({ path, ownMessage: def.error !== undefined });
  const children: [string, unknown][] = [];
  if (def.type === "object") children.push(...Object.entries(def.shape as Record<string, unknown>).map(([k, v]): [string, unknown] => [`${path}.${k}`, v]));
  if (def.type === "array") children.push([`${path}[]`, def.element]);
  if (def.type === "union") children.push(...(def.options as unknown[]).map((o): [string, unknown] => [path, o]));
  if ("innerType" in def) children.push([path, def.innerType]);
  for (const [p, child] of children) unionsOf(child as z.core.$ZodType, p, found);
  return found;
}

describe("OpenAI request schemas", () => {
  it("give every union a message naming its field and rule: zod's own says only 'Invalid input'", () => {
    const unions = [...unionsOf(ChatCompletionRequest), ...unionsOf(CompletionRequest)];
    expect(unions.map((u) => u.path)).toEqual(expect.arrayContaining([".messages[].content", ".stop", ".prompt"]));
    expect(unions.filter((u) => !u.ownMessage)).toEqual([]);
    expect(refusal(ChatCompletionRequest, chat({ stop: ["a", "b", "c", "d", "e"] }))).toBe("stop: expected a string or a list of at most 4 strings");
    expect(refusal(ChatCompletionRequest, chat({ stop: 3 }))).toBe("stop: expected a string or a list of at most 4 strings");
    expect(refusal(ChatCompletionRequest, chat({ messages: [{ role: "user", content: 42 }] }))).toBe("messages[0].content: expected a string or a list of at most 1024 content parts");
    expect(refusal(CompletionRequest, completion({ prompt: [] }))).toMatch(/^prompt: expected a string, a list of 1 to 64 strings, a list of token ids/);
    expect(refusal(CompletionRequest, completion({ prompt: [1, "two"] }))).toMatch(/^prompt: expected a string/);
    // A value of the right shape with one bad element still names that element.
    expect(refusal(ChatCompletionRequest, chat({ messages: [{ role: "user", content: [{ type: "text" }] }] }))).toBe("messages[0].content[0].text: a text part needs a string 'text'");
    expect(refusal(CompletionRequest, completion({ prompt: [[1], [-1]] }))).toMatch(/^prompt\[1\]\[0\]: /);
  });

  it("refuse stream_options unless stream is true, as OpenAI does", () => {
    const refused = "stream_options: The 'stream_options' parameter is only allowed when 'stream' is enabled.";
    for (const stream of [undefined, null, false]) {
      expect(refusal(ChatCompletionRequest, chat({ stream, stream_options: { include_usage: true } }))).toBe(refused);
      expect(refusal(CompletionRequest, completion({ stream, stream_options: {} }))).toBe(refused);
    }
    expect(refusal(ChatCompletionRequest, chat({ stream: true, stream_options: { include_usage: true } }))).toBe("ok");
    expect(refusal(ChatCompletionRequest, chat({ stream_options: null }))).toBe("ok");
    expect(refusal(CompletionRequest, completion({ stream: false, stream_options: null }))).toBe("ok");
  });

  it("refuse a message without content, except an assistant's that calls tools and a function's null, as OpenAI's spec has it", () => {
    for (const role of ["system", "developer", "user", "tool"]) {
      for (const message of [{ role }, { role, content: null }]) {
        expect(refusal(ChatCompletionRequest, chat({ messages: [message] }))).toBe(`messages[0].content: a ${role} message needs 'content' (a string or a list of content parts)`);
      }
    }
    const call = [{ id: "c1", type: "function", function: { name: "f", arguments: "{}" } }];
    const user = { role: "user", content: "hi" };
    expect(refusal(ChatCompletionRequest, chat({ messages: [user, { role: "assistant", tool_calls: call }] }))).toBe("ok");
    expect(refusal(ChatCompletionRequest, chat({ messages: [user, { role: "assistant", content: null, refusal: "I cannot help with that." }, user] }))).toBe("ok");
    expect(refusal(ChatCompletionRequest, chat({ messages: [user, { role: "assistant", content: null, function_call: { name: "f", arguments: "{}" } }] }))).toBe("ok");
    expect(refusal(ChatCompletionRequest, chat({ messages: [user, { role: "assistant", content: null }] }))).toBe("messages[1].content: an assistant message needs 'content' unless it carries 'tool_calls' or 'function_call'");
    expect(refusal(ChatCompletionRequest, chat({ messages: [user, { role: "assistant", tool_calls: null }] }))).toMatch(/^messages\[1\]\.content: /);
    expect(refusal(ChatCompletionRequest, chat({ messages: [user, { role: "function", name: "f", content: null }] }))).toBe("ok");
    expect(refusal(ChatCompletionRequest, chat({ messages: [user, { role: "function", name: "f" }] }))).toBe("messages[1].content: a function message needs 'content' (a string or null)");
    expect(refusal(ChatCompletionRequest, chat({ messages: [{ role: "user", content: "" }] }))).toBe("ok");
  });
});
