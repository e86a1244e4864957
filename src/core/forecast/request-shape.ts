import type { MeanRequest } from "../schemas/request-class.ts";
import { seriesClass } from "./demand-estimate.ts";

/** Tokens the edge has counted for a class's answered requests so far (its counters' totals). */
export interface TokenCounts {
  prompt: number;
  generation: number;
  answers: number;
}

/** The edge's counters of answered requests' tokens, by class (see src/worker/metrics.ts). */
export const TOKEN_COUNTERS = { prompt: "greenference_prompt_tokens_total", generation: "greenference_generation_tokens_total", answers: "greenference_answers_total" } as const;

/** Answers a class needs in a window before its mean request is taken from them: fewer say little. */
export const MIN_ANSWERS_FOR_SHAPE = 10;

/**
 * Tokens per class in the edge's Prometheus counter totals (`name{class="SS"}`).
 *
 * @example
 * classTokenCounts({ 'greenference_prompt_tokens_total{class="SS"}': 900, 'greenference_answers_total{class="SS"}': 3 });
 * // { SS: { prompt: 900, generation: 0, answers: 3 } }
 */
export function classTokenCounts(totals: Record<string, number>): Record<string, TokenCounts> {
  const out: Record<string, TokenCounts> = {};
  const fields = Object.entries(TOKEN_COUNTERS) as [keyof TokenCounts, string][];
  for (const [key, value] of Object.entries(totals)) {
    const { name, classId: cls } = seriesClass(key);
    const field = fields.find(([, counter]) => counter === name)?.[0];
    if (!field || !cls) continue;
    out[cls] ??= { prompt: 0, generation: 0, answers: 0 };
    out[cls][field] += value;
  }
  return out;
}

/**
 * Each class's mean request over the answers counted between two samples (a counter that went
 * down, a reset, counts from zero); a class with fewer than `MIN_ANSWERS_FOR_SHAPE` answers in the
 * window has none.
 */
export function measuredShapes(previous: Record<string, TokenCounts> | undefined, current: Record<string, TokenCounts>): Record<string, MeanRequest> {
  const out: Record<string, MeanRequest> = {};
  for (const [cls, now] of Object.entries(current)) {
    const before = previous?.[cls];
    const delta = (field: keyof TokenCounts) => (before && now[field] >= before[field] ? now[field] - before[field] : now[field]);
    const answers = delta("answers");
    if (answers < MIN_ANSWERS_FOR_SHAPE) continue;
    const [inputTokens, outputTokens] = [delta("prompt") / answers, delta("generation") / answers];
    if (inputTokens > 0 && outputTokens > 0) out[cls] = { inputTokens, outputTokens };
  }
  return out;
}

/**
 * One request shape for traffic of several classes: the classes' mean requests weighted by their
 * demand; undefined when no class with demand has one.
 *
 * @example
 * demandWeightedShape([{ demandRps: 3, meanRequest: { inputTokens: 100, outputTokens: 50 } }, { demandRps: 1, meanRequest: { inputTokens: 2100, outputTokens: 10 } }]);
 * // { inputTokens: 600, outputTokens: 40 }
 */
export function demandWeightedShape(classes: readonly { demandRps: number; meanRequest?: MeanRequest | undefined }[]): MeanRequest | undefined {
  const known = classes.filter((c) => c.meanRequest && c.demandRps > 0);
  const total = known.reduce((s, c) => s + c.demandRps, 0);
  if (!(total > 0)) return undefined;
  const mean = (f: keyof MeanRequest) => known.reduce((s, c) => s + c.demandRps * c.meanRequest![f], 0) / total;
  return { inputTokens: mean("inputTokens"), outputTokens: mean("outputTokens") };
}
