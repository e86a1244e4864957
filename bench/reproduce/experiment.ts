import { z } from "zod";

/** The seeds whose experiments `greenference reproduce` re-runs. */
export const SEEDS = ["heron", "dynamollm", "freesh", "greenserve", "clover"] as const;
export const SeedName = z.enum(SEEDS);
export type SeedName = z.infer<typeof SeedName>;

/**
 * The other side of a headline's trade-off: a figure that must stay within `limit` for the
 * headline to count (e.g. DynamoLLM's P99 TTFT no worse than SinglePool's while it saves energy).
 */
export const Guard = z.object({
  metric: z.string().min(1),
  ours: z.number(),
  /** The bound ours must keep, on the side `side` says. */
  limit: z.number(),
  side: z.enum(["at-most", "at-least"]),
  holds: z.boolean(),
  unit: z.enum(["fraction", "ratio"]),
});
export type Guard = z.infer<typeof Guard>;

/**
 * One compared figure: the paper's value, ours (simulated), and the baseline it is measured against.
 * Relative changes are fractions (-0.35 for "35% less energy"); ratios are plain (1.8 for "1.8x").
 */
export const ExperimentRow = z.object({
  seed: z.union([SeedName, z.literal("greenference")]),
  /** What is compared, e.g. "energy vs SinglePool, conversation hour". */
  metric: z.string().min(1),
  paper: z.number(),
  ours: z.number(),
  /** The baseline the change is measured against, by name (e.g. "SinglePool", "static 1410 MHz"). */
  baseline: z.string().min(1),
  holds: z.boolean(),
  /** "fraction" (relative change) or "ratio" (x times). */
  unit: z.enum(["fraction", "ratio"]),
  /** The command that reproduces this row. */
  command: z.string().min(1),
  note: z.string().optional(),
  /** A stable name for the row across runs (headlines and combined-policy rows carry one; the sweep groups by it). */
  id: z.string().min(1).optional(),
  /** The seed's headline (a paper's main claim): judged with its guards, and the row the sweep repeats. */
  headline: z.boolean().optional(),
  /** The other sides of the trade-off; a row with guards holds only when its figure and every guard hold. */
  guards: z.array(Guard).optional(),
  /** A combined-policy row whose figure is within its stated tolerance of the seed policy's (`combinedRow`): a tie, not a win. */
  tie: z.boolean().optional(),
});
export type ExperimentRow = z.infer<typeof ExperimentRow>;

/** Inputs every experiment takes (defaults point at the repository's data/). */
export interface ReproduceOptions {
  /** The data folder (`--data`, default the repository's data/, see data/README.md). */
  dataDir: string;
  /** A request trace replacing the seed's default (`--trace`). */
  trace?: string;
  /** Grid carbon/wind CSV files replacing the seed's defaults (`--grid`, repeatable). */
  grids: string[];
  /** Where tables and plots are written (`--out`). */
  outDir: string;
  seed: number;
  progress: (message: string) => void;
  /** Hour-scale experiments on the fluid fleet simulator instead of per request (`--fluid`): faster, latency looked up from the profile. */
  fluidHours?: boolean;
  /** A small configuration for tests (`--quick`): short windows, few points; its rows say nothing about the paper. */
  quick?: boolean;
  /**
   * A robustness-sweep cell (`reproduce sweep`): only the headline and combined-policy rows are
   * worked out, at the sweep's sizes, over this window of the grid series.
   */
  sweep?: SweepCell;
}

/** A 48 h window of the grid series, by its first hour (0 is the files' first row). */
export interface GridWindow {
  label: string;
  startHour: number;
  hours: number;
}

/** Where a sweep cell's seeds look in the grid series. */
export interface SweepCell {
  window: GridWindow;
}

/** What one seed's reproduction produces. */
export interface SeedResult {
  rows: ExperimentRow[];
  /** Markdown tables (name -> table) for the report and the out folder. */
  tables: { name: string; markdown: string }[];
  /** SVG plots written to the out folder (name without extension). */
  plots: { name: string; svg: string }[];
  /** The inputs used (files, seeds, sizes), shown in the report. */
  inputs: Record<string, unknown>;
}

export interface SeedReproduction {
  seed: SeedName;
  run(options: ReproduceOptions): Promise<SeedResult>;
}

/**
 * Whether our result reaches the paper's direction and at least 80% of its magnitude. For a
 * fraction the direction is the sign; for a ratio it is the side of 1.
 *
 * @example
 * holds(-0.35, -0.30, "fraction"); // true: 0.30 >= 0.8 x 0.35
 */
export function holds(paper: number, ours: number, unit: "fraction" | "ratio"): boolean {
  const p = unit === "ratio" ? paper - 1 : paper;
  const o = unit === "ratio" ? ours - 1 : ours;
  if (p === 0) return Math.abs(o) < 1e-9;
  return Math.sign(o) === Math.sign(p) && Math.abs(o) >= 0.8 * Math.abs(p);
}
