import { z } from "zod";

/** GPUs by kind (FREESH's c in C), e.g. { A100: 2 }. */
const GpuCounts = z.record(z.string().min(1), z.number().int().nonnegative());

/** One (partition, type, mode) configuration as profiled at the highest clock. */
export const FreeshConfigPoint = z.object({
  /** FREESH's L̄_{s,r,m}: the most queries per second one worker serves within SLO; 0 = cannot serve. */
  maxQps: z.number().nonnegative(),
  /** FREESH's P̃_{s,r,m}: operating power of one worker, W. */
  powerW: z.number().nonnegative(),
  /** FREESH's SLO_{s,r,m}: measured average end-to-end latency, s. */
  latencyS: z.number().nonnegative(),
  tbtMs: z.number().nonnegative(),
  ttftMs: z.number().nonnegative(),
  /** Power counted against a site's cap where one is given (e.g. peak x server overhead); defaults to `powerW`. */
  capPowerW: z.number().nonnegative().optional(),
});
export type FreeshConfigPoint = z.infer<typeof FreeshConfigPoint>;

/** A request partition s: its configurations `[type][mode]`, its demand forecast and its latency tolerances. */
export const FreeshPartitionInput = z.object({
  name: z.string().min(1),
  configs: z.array(z.array(FreeshConfigPoint)),
  /** FREESH's L̄_{r,t} under this partition: predicted QPS `[step][type]` over the episode. */
  demandQps: z.array(z.array(z.number().nonnegative())).min(1),
  /** FREESH's SLŌ_r per type, s: configurations slower than this are filtered out (1e). */
  latencyToleranceS: z.array(z.number().positive()),
});
export type FreeshPartitionInput = z.infer<typeof FreeshPartitionInput>;

/**
 * One episode of FREESH's pool-level problem (Eq. 1): sites N with GPUs per kind, work modes M
 * with the GPUs each needs (G_{m,c}), request partitions S with their types R, per-site marginal
 * emission rates λ_n(t) over the episode's steps (may be negative), the demand headroom α and the
 * objective. Cross-field sizes are checked at parse time.
 *
 * @example
 * const input = FreeshPoolInput.parse(freeshEpisodeInput(data, { episode: 24 }));
 */
export const FreeshPoolInput = z
  .object({
    types: z.array(z.string().min(1)).min(1),
    modes: z.array(z.object({ name: z.string().min(1), gpus: GpuCounts })).min(1),
    sites: z.array(z.object({ name: z.string().min(1), gpus: GpuCounts, powerCapW: z.number().positive().optional() })).min(1),
    partitions: z.array(FreeshPartitionInput).min(1),
    /** `[site][step]`, emission rate per MWh (PJM publishes lb/MWh); only read by the carbon objective. */
    emissions: z.array(z.array(z.number())),
    stepHours: z.number().positive(),
    /** FREESH's α: capacity must cover α x the forecast (1.1 in its stored run). */
    alpha: z.number().positive().default(1.1),
    /** Per-type TBT and TTFT SLOs, ms (FREESH Table 7); configurations above them are filtered out. */
    slo: z.object({ tbtMs: z.array(z.number().positive()), ttftMs: z.array(z.number().positive()) }),
    objective: z.enum(["carbon", "energy"]).default("carbon"),
    /** Cost of one unserved QPS in objective units; by default large enough that serving always wins. */
    unservedPenalty: z.number().positive().optional(),
    /** Bound on the plan's energy over the episode, kWh (not in FREESH: used to break MinEnergy's ties, see `solveMinEnergy`). */
    maxEnergyKwh: z.number().nonnegative().optional(),
  })
  .superRefine((p, ctx) => {
    const issue = (message: string, path: (string | number)[]) => ctx.addIssue({ code: "custom", message, path });
    const steps = p.partitions[0]?.demandQps.length ?? 0;
    if (p.emissions.length !== p.sites.length) issue(`expected emissions for ${p.sites.length} sites`, ["emissions"]);
    p.emissions.forEach((row, n) => row.length !== steps && issue(`expected ${steps} steps`, ["emissions", n]));
    for (const key of ["tbtMs", "ttftMs"] as const) if (p.slo[key].length !== p.types.length) issue(`expected one per type`, ["slo", key]);
    p.partitions.forEach((s, si) => {
      if (s.configs.length !== p.types.length || s.configs.some((row) => row.length !== p.modes.length)) issue(`configs must be [${p.types.length} types][${p.modes.length} modes]`, ["partitions", si, "configs"]);
      if (s.demandQps.length !== steps || s.demandQps.some((row) => row.length !== p.types.length)) issue(`demand must be [${steps} steps][${p.types.length} types]`, ["partitions", si, "demandQps"]);
      if (s.latencyToleranceS.length !== p.types.length) issue(`expected one tolerance per type`, ["partitions", si, "latencyToleranceS"]);
    });
  });
export type FreeshPoolInput = z.infer<typeof FreeshPoolInput>;
/** What callers write: defaults (α, objective) may be left out. */
export type FreeshPoolInputIn = z.input<typeof FreeshPoolInput>;
