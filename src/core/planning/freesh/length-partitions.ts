import type { ClassId } from "../../schemas/ids.ts";
import type { Plan } from "../../schemas/plan.ts";

/** One way to split requests into FREESH's short/long types: which type each class falls in. */
export interface LengthPartition {
  /** E.g. "in<M,out<L": inputs below bin M are short, outputs below bin L. */
  name: string;
  /** Type names, the same in every partition of a scheme ("ss", "sl", "ls", "ll" for 2 x 2). */
  types: string[];
  /** Per class (in the order given), the index of its type. */
  typeOf: number[];
}

/**
 * FREESH's selectable length partitions over a fleet's classes: every short/long split of the
 * input bins crossed with every split of the output bins (a 3 x 3 scheme gives four 2 x 2
 * partitions, the shape of FREESH's Table 4), so the pool MILP's (1f) picks the split that serves
 * the demand cheapest. An axis with one bin is not split.
 *
 * @example
 * lengthPartitions(classes3x3).map((p) => p.name); // ["in<M,out<M", "in<M,out<L", "in<L,out<M", "in<L,out<L"]
 */
export function lengthPartitions(classes: readonly { inputBin: number; outputBin: number }[], labels: { input: readonly string[]; output: readonly string[] } = { input: [], output: [] }): LengthPartition[] {
  const splits = (bins: number) => (bins > 1 ? Array.from({ length: bins - 1 }, (_, k) => k + 1) : [undefined]);
  const inBins = Math.max(...classes.map((c) => c.inputBin)) + 1;
  const outBins = Math.max(...classes.map((c) => c.outputBin)) + 1;
  const side = (split: number | undefined, bin: number) => (split === undefined ? "" : bin < split ? "s" : "l");
  const names = (split: number | undefined) => (split === undefined ? [""] : ["s", "l"]);
  const at = (split: number | undefined, axis: readonly string[]) => (split === undefined ? "*" : `<${axis[split] ?? split}`);
  return splits(inBins).flatMap((i) =>
    splits(outBins).map((o) => {
      const types = names(i).flatMap((a) => names(o).map((b) => a + b || "all"));
      return { name: `in${at(i, labels.input)},out${at(o, labels.output)}`, types, typeOf: classes.map((c) => types.indexOf(side(i, c.inputBin) + side(o, c.outputBin) || "all")) };
    }),
  );
}

/**
 * A plan made over a partition's types, restated over the fleet's classes: each type's load,
 * routing weights and shortfall are shared among its classes in proportion to their demand.
 */
export function planOverClasses(plan: Plan, partition: LengthPartition, classes: readonly { id: ClassId; demandRps: number }[]): Plan {
  const typeDemand = partition.types.map((_, t) => classes.reduce((s, c, ci) => s + (partition.typeOf[ci] === t ? c.demandRps : 0), 0));
  const members = (type: string) => {
    const t = partition.types.indexOf(type);
    return classes.flatMap((c, ci) => (partition.typeOf[ci] === t && c.demandRps > 0 && typeDemand[t]! > 0 ? [{ id: c.id, share: c.demandRps / typeDemand[t]! }] : []));
  };
  const spread = (rates: Readonly<Record<string, number | undefined>>) => Object.fromEntries(Object.entries(rates).flatMap(([type, x]) => members(type).map((m) => [m.id, (x ?? 0) * m.share])));
  const routing: Record<string, Plan["routing"][ClassId]> = {};
  for (const [type, targets] of Object.entries(plan.routing)) for (const m of members(type)) routing[m.id] = (targets ?? []).map((t) => ({ ...t, weight: t.weight * m.share }));
  return {
    ...plan,
    sites: plan.sites.map((s) => ({ ...s, instances: s.instances.map((i) => ({ ...i, loadRps: spread(i.loadRps) as Plan["sites"][number]["instances"][number]["loadRps"] })) })),
    routing: routing as Plan["routing"],
    shortfall: spread(plan.shortfall) as Plan["shortfall"],
  };
}
