import { expect } from "vitest";
import type { InstanceInput } from "../applier/plan-fixtures.test-helper.ts";
import type { Engine } from "../engines/engine.ts";
import { parsePrometheusText, sumOf } from "../util/prometheus-text.ts";

/** A GreenServe-style site: one prefill instance, one decode instance. */
export const split: InstanceInput[] = [
  { id: "p0", gpus: [0], role: "prefill" },
  { id: "d0", gpus: [1], role: "decode" },
];

/** About 3,000 prompt tokens: a prefill that costs something next to a short answer. */
export const longPrompt = { messages: [{ role: "user" as const, content: "lorem ipsum dolor ".repeat(1000) }], max_tokens: 8 };

/** A completion's usage with the site's receipt. */
export interface Receipt {
  usage: { prompt_tokens: number; completion_tokens: number; greenference: { energy_j: number; prefill_energy_j?: number } };
}

/** An engine's own Prometheus counter. */
export async function engineCounter(engine: Engine, name: string): Promise<number> {
  const text = await (await fetch(`${engine.url}/metrics`)).text();
  return sumOf(parsePrometheusText(text), name) ?? 0;
}

/** The usage of an SSE answer (its usage chunk). */
export function usageOfStream(text: string): Partial<Receipt["usage"]> | undefined {
  return text
    .split("\n\n")
    .filter((e) => e.startsWith("data: {"))
    .map((e) => JSON.parse(e.slice(6)) as Partial<Receipt>)
    .find((e) => e.usage)?.usage;
}

/**
 * `answer` was split between prefill engine `p0` and decode engine `d0`: the prefill engine computed
 * the whole prompt and one token, the decode engine the `longPrompt`'s eight, and the receipt bills both.
 */
export async function expectSplitBetween(answer: Receipt, p0: Engine, d0: Engine): Promise<void> {
  expect(answer.usage.completion_tokens).toBe(8);
  expect(await engineCounter(p0, "vllm:generation_tokens_total")).toBe(1);
  expect(await engineCounter(p0, "vllm:prompt_tokens_total")).toBe(answer.usage.prompt_tokens);
  expect(await engineCounter(d0, "vllm:generation_tokens_total")).toBe(8);
  const { energy_j: energyJ, prefill_energy_j: prefillJ } = answer.usage.greenference;
  expect(prefillJ).toBeGreaterThan(0);
  expect(energyJ).toBeGreaterThan(prefillJ!);
}
