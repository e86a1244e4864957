import type { ClassScheme } from "../schemas/request-class.ts";
import { classify } from "../workload/class-scheme.ts";
import { classifyRequest } from "./classify-request.ts";
import type { OutputLengthPredictor } from "./output-predictor.ts";

/** How well one predictor classified a replayed trace. */
export interface ReplayAccuracy {
  /** Share of requests whose class (input and output bin) the edge got right. */
  classAccuracy: number;
  /** Share whose class came from the predictor rather than the default bin (it had seen enough). */
  predicted: number;
}

/**
 * Replays requests in arrival order through the edge's classification as it runs: each request is
 * classified with the predictor (no `max_tokens` hint, as in the trace), compared with the class
 * its actual output length gives, then learned from. With `isolates` > 1, request i goes to
 * isolate i mod `isolates`, each with a predictor of its own (what isolate memory gives); with 1,
 * one predictor sees every request (what a shared one gives).
 *
 * @example
 * replayPredictor(trace.requests, scheme, () => new HistogramOutputPredictor(), 1); // { classAccuracy: 0.44, predicted: 1 }
 */
export function replayPredictor(requests: readonly { inputTokens: number; outputTokens: number }[], scheme: ClassScheme, make: () => OutputLengthPredictor, isolates = 1): ReplayAccuracy {
  const predictors = Array.from({ length: isolates }, make);
  let correct = 0;
  let predicted = 0;
  requests.forEach((r, i) => {
    const predictor = predictors[i % isolates]!;
    const query = { scheme, key: "anonymous", model: "trace", inputTokens: r.inputTokens };
    const got = classifyRequest(query, predictor);
    if (!got.ok) throw new Error(got.message);
    if (got.value.classId === classify(scheme, r.inputTokens, r.outputTokens)) correct++;
    if (got.value.source === "predictor") predicted++;
    predictor.observe(query, r.outputTokens);
  });
  const n = Math.max(1, requests.length);
  return { classAccuracy: correct / n, predicted: predicted / n };
}
