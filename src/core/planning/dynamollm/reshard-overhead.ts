import type { GpuSpec } from "../../model/gpu-specs.ts";
import { weightBytes, type LlmSpec } from "../../model/llm-specs.ts";

/** The instances on one 8-GPU node, as TP degrees in ascending order, e.g. [2, 2, 4]; [] is an empty node. */
export type NodeLayout = readonly number[];

/**
 * DynamoLLM Table VI: time to move model weights when re-sharding one 8-GPU node, in units of τ
 * (the time to send 1/8 of the model over NVLink), with the graph-matching transfer plan. Rows
 * are the source layout, columns the destination ("TP2" alone is one TP2 instance on the node).
 */
export const DYNAMOLLM_TABLE_VI: Readonly<Record<string, Readonly<Record<string, number>>>> = {
  TP2: { TP2: 0, "4TP2": 4, TP4: 2, "TP2+TP4": 2, "2TP4": 2, TP8: 1 },
  "4TP2": { TP2: 0, "4TP2": 0, TP4: 0, "TP2+TP4": 0, "2TP4": 0, TP8: 0 },
  TP4: { TP2: 2, "4TP2": 2, TP4: 0, "TP2+TP4": 2, "2TP4": 2, TP8: 1 },
  "TP2+TP4": { TP2: 0, "4TP2": 2, TP4: 0, "TP2+TP4": 0, "2TP4": 1, TP8: 1 },
  "2TP4": { TP2: 1, "4TP2": 1, TP4: 0, "TP2+TP4": 1, "2TP4": 0, TP8: 0 },
  TP8: { TP2: 1, "4TP2": 1, TP4: 1, "TP2+TP4": 1, "2TP4": 1, TP8: 0 },
};

/** The table's largest entry, used for layouts it does not list (e.g. 2TP2, 3TP2): a conservative bound. */
const UNLISTED_TAU = 4;

/** Table VI's name of a layout: "TP8", "2TP4", "TP2+TP4", ... ("" for an empty node). */
export function layoutName(layout: NodeLayout): string {
  const counts = new Map<number, number>();
  for (const tp of layout) counts.set(tp, (counts.get(tp) ?? 0) + 1);
  return [...counts.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([tp, n]) => `${n > 1 ? n : ""}TP${tp}`)
    .join("+");
}

/**
 * Re-sharding time of one node in τ units: 0 for an unchanged layout, 0 for a node that is new
 * (DynamoLLM starts extra VMs ahead of the epoch, from snapshots and cached weights) or emptied;
 * Table VI where it lists the pair, its worst case (4τ) where it does not.
 */
export function reshardTau(from: NodeLayout, to: NodeLayout): number {
  const a = layoutName(from);
  const b = layoutName(to);
  if (a === b || a === "" || b === "") return 0;
  return DYNAMOLLM_TABLE_VI[a]?.[b] ?? UNLISTED_TAU;
}

/** τ for a model on a GPU: 1/8 of the weights over one NVLink direction (Llama2-70B on H100: 38 ms; the paper measured 50 ms). */
export function tauSeconds(llm: LlmSpec, gpu: GpuSpec): number {
  return weightBytes(llm) / 8 / (gpu.nvlinkGBps * 1e9);
}

/**
 * Packs instance counts per TP into nodes of `nodeGpus` GPUs, largest TP first (first fit), so
 * that TP8 fills a node, TP4 pairs up and TP2 fills the gaps: the layouts Table VI is written for.
 */
export function packNodes(counts: Readonly<Record<number, number>>, nodeGpus: number): NodeLayout[] {
  const nodes: { free: number; tps: number[] }[] = [];
  const tps = Object.keys(counts).map(Number).sort((a, b) => b - a);
  for (const tp of tps) {
    for (let i = 0; i < (counts[tp] ?? 0); i++) {
      let node = nodes.find((n) => n.free >= tp);
      if (!node) nodes.push((node = { free: nodeGpus, tps: [] }));
      node.free -= tp;
      node.tps.push(tp);
    }
  }
  return nodes.map((n) => n.tps.sort((a, b) => a - b));
}
