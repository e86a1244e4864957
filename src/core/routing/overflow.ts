import type { ClassId } from "../schemas/ids.ts";

export interface ClassBins {
  inputBin: number;
  outputBin: number;
}

/**
 * The pools a class overflows to when its own pool is saturated (DynamoLLM: "the next larger
 * pool"): every class at least as large on both axes, nearest first; at equal distance a longer
 * output bin comes first, because output length is predicted and under-predictions are the
 * common miss.
 *
 * @example
 * overflowOrder(bins3x3, "SS"); // ["SM", "MS", "SL", "MM", "LS", ...]
 */
export function overflowOrder(classes: Readonly<Record<string, ClassBins>>, classId: ClassId): ClassId[] {
  const own = classes[classId];
  if (!own) return [];
  return (Object.entries(classes) as [ClassId, ClassBins][])
    .filter(([id, c]) => id !== classId && c.inputBin >= own.inputBin && c.outputBin >= own.outputBin)
    .map(([id, c]) => ({ id, dIn: c.inputBin - own.inputBin, dOut: c.outputBin - own.outputBin }))
    .sort((a, b) => a.dIn + a.dOut - (b.dIn + b.dOut) || b.dOut - a.dOut)
    .map((c) => c.id);
}
