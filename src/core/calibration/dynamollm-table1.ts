/**
 * DynamoLLM Table I (Llama2-70B on a DGX H100, 2000 tokens/s, SLO 5x unloaded latency): the
 * energy-optimal (TP, GPU frequency) per request class, the bold cell of each row, and the cells
 * that met the SLO (non-empty). Transcribed from seed 003; 2.0 GHz is the H100's 1980 MHz.
 */
export interface TableIRow {
  classId: string;
  best: { tp: number; mhz: number };
  feasible: ReadonlyArray<{ tp: number; mhz: number }>;
}

const GHZ = { "0.8": 800, "1.2": 1200, "1.6": 1600, "2.0": 1980 } as const;
const cells = (spec: string) =>
  spec.split(" ").map((c) => {
    const [tp, ghz] = c.split("@") as [string, keyof typeof GHZ];
    return { tp: Number(tp), mhz: GHZ[ghz] };
  });

export const DYNAMOLLM_TABLE_I: readonly TableIRow[] = [
  { classId: "SS", best: { tp: 2, mhz: 1200 }, feasible: cells("2@1.2 2@1.6 2@2.0 4@0.8 4@1.2 4@1.6 4@2.0 8@0.8 8@1.2 8@1.6 8@2.0") },
  { classId: "SM", best: { tp: 2, mhz: 1200 }, feasible: cells("2@1.2 2@1.6 2@2.0 4@0.8 4@1.2 4@1.6 4@2.0 8@0.8 8@1.2 8@1.6 8@2.0") },
  { classId: "SL", best: { tp: 4, mhz: 1200 }, feasible: cells("4@0.8 4@1.2 4@1.6 4@2.0 8@0.8 8@1.2 8@1.6 8@2.0") },
  { classId: "MS", best: { tp: 2, mhz: 1600 }, feasible: cells("2@1.6 2@2.0 4@1.2 4@1.6 4@2.0 8@0.8 8@1.2 8@1.6 8@2.0") },
  { classId: "MM", best: { tp: 4, mhz: 1600 }, feasible: cells("4@1.2 4@1.6 4@2.0 8@0.8 8@1.2 8@1.6 8@2.0") },
  { classId: "ML", best: { tp: 4, mhz: 1980 }, feasible: cells("4@1.2 4@1.6 4@2.0 8@0.8 8@1.2 8@1.6 8@2.0") },
  { classId: "LS", best: { tp: 4, mhz: 1200 }, feasible: cells("4@1.2 4@1.6 4@2.0 8@0.8 8@1.2 8@1.6 8@2.0") },
  { classId: "LM", best: { tp: 8, mhz: 1200 }, feasible: cells("8@1.2 8@1.6 8@2.0") },
  { classId: "LL", best: { tp: 8, mhz: 1600 }, feasible: cells("8@1.2 8@1.6 8@2.0") },
];

/**
 * Whether Table I shows a cell as meeting the SLO (a non-empty cell).
 *
 * @example
 * paperMeetsSlo(DYNAMOLLM_TABLE_I[0]!, 2, 800); // false: SS at TP2 0.8 GHz is a grey box
 */
export function paperMeetsSlo(row: TableIRow, tp: number, mhz: number): boolean {
  return row.feasible.some((c) => c.tp === tp && c.mhz === mhz);
}
