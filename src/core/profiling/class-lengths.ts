import { z } from "zod";
import type { Rng } from "../ports/rng.ts";
import type { ClassScheme } from "../schemas/request-class.ts";

/** Token-length range of one request class: lengths are drawn log-uniformly in [min, max). */
export const LengthRange = z.object({ min: z.number().int().positive(), max: z.number().int().positive() }).refine((r) => r.max > r.min, { message: "max must exceed min", path: ["max"] });
export type LengthRange = z.infer<typeof LengthRange>;

export const ClassLengths = z.object({ classId: z.string().min(1), input: LengthRange, output: LengthRange });
export type ClassLengths = z.infer<typeof ClassLengths>;

/**
 * The 3x3 classes of DynamoLLM Table IV: input S < 256 <= M < 1024 <= L, output S < 100 <= M < 350
 * <= L. The table leaves the lower and upper ends open; 16 and 4096 (input) and 8 and 1024
 * (output) close them here. Class id = input bin + output bin, e.g. "SL" = short input, long output.
 */
export const DYNAMOLLM_CLASS_LENGTHS: readonly ClassLengths[] = (() => {
  const input = { S: { min: 16, max: 256 }, M: { min: 256, max: 1024 }, L: { min: 1024, max: 4096 } };
  const output = { S: { min: 8, max: 100 }, M: { min: 100, max: 350 }, L: { min: 350, max: 1024 } };
  const bins = ["S", "M", "L"] as const;
  return bins.flatMap((i) => bins.map((o) => ({ classId: `${i}${o}`, input: input[i], output: output[o] })));
})();

/** Draws one (input, output) pair of a class, keeping input + output within the model's context. */
export function sampleLengths(rng: Rng, c: ClassLengths, maxContext: number): { inputTokens: number; outputTokens: number } {
  const draw = (r: LengthRange) => Math.floor(Math.exp(Math.log(r.min) + rng.next() * (Math.log(r.max) - Math.log(r.min))));
  const outputTokens = draw(c.output);
  return withinContext({ inputTokens: draw(c.input), outputTokens }, maxContext);
}

/**
 * A request's lengths as a model with a context of `maxContext` tokens serves them: the output
 * kept (up to the context less one prompt token), the prompt cut to what is left, as an engine
 * that truncates prompts from the left does.
 *
 * @example
 * withinContext({ inputTokens: 8000, outputTokens: 100 }, 4096); // { inputTokens: 3996, outputTokens: 100 }
 */
export function withinContext<T extends { inputTokens: number; outputTokens: number }>(lengths: T, maxContext: number): T {
  const outputTokens = Math.min(lengths.outputTokens, maxContext - 1);
  const inputTokens = Math.max(1, Math.min(lengths.inputTokens, maxContext - outputTokens));
  return inputTokens === lengths.inputTokens && outputTokens === lengths.outputTokens ? lengths : { ...lengths, inputTokens, outputTokens };
}

/** Mean lengths of a class under log-uniform sampling (used to size loads). */
export function meanLengths(c: ClassLengths): { inputTokens: number; outputTokens: number } {
  const mean = (r: LengthRange) => (r.max - r.min) / (Math.log(r.max) - Math.log(r.min));
  return { inputTokens: mean(c.input), outputTokens: mean(c.output) };
}

/**
 * Length ranges of each class of a scheme, for profiling a workload's own classes: a bin spans
 * from its lower edge (exclusive, as lengths equal to an edge fall below) to its upper edge, the
 * outer bins closed by the workload's shortest and longest lengths.
 */
export function classLengthsFromScheme(scheme: ClassScheme, lengths: readonly { inputTokens: number; outputTokens: number }[]): ClassLengths[] {
  const ranges = (edges: readonly number[], values: number[]) => {
    const lo = Math.max(1, Math.min(...values));
    const hi = Math.max(...values) + 1;
    const bounds = [lo, ...edges.map((e) => e + 1), hi];
    return bounds.slice(0, -1).map((min, i) => ({ min, max: Math.max(min + 1, bounds[i + 1]!) }));
  };
  const input = ranges(scheme.inputEdges, lengths.map((l) => l.inputTokens));
  const output = ranges(scheme.outputEdges, lengths.map((l) => l.outputTokens));
  return scheme.inputLabels.flatMap((il, i) => scheme.outputLabels.map((ol, o) => ({ classId: il + ol, input: input[i]!, output: output[o]! })));
}
