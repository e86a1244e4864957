import { z } from "zod";
import { reportDuplicates } from "./checks.ts";
import { ClassId, EpochMs, SiteId } from "./ids.ts";

/** Most slots a deferral grid may hold: a week of 15-minute slots. */
export const MAX_DEFERRAL_SLOTS = 672;
/** Most backlog entries one deferral plan takes (a batch's lines are grouped by class into one entry). */
export const MAX_BACKLOG_ENTRIES = 50_000;
/** Most requests one backlog entry holds (OpenAI's Batch API allows 50,000 lines per file). */
export const MAX_ENTRY_REQUESTS = 1_000_000;

/**
 * Work that can wait: `requests` requests of one class, submitted at `submittedAtMs` and due by
 * `deadlineMs` (a batch's lines of one class, or one flex request). It may run in any slot that
 * starts at or after its submission; it is on time in a slot that ends by its deadline.
 *
 * @example
 * DeferrableWork.parse({ id: "batch_abc:LM", classId: "LM", requests: 120, submittedAtMs: t, deadlineMs: t + 86_400_000 });
 */
export const DeferrableWork = z
  .object({
    id: z.string().min(1).max(128),
    classId: ClassId,
    requests: z.number().int().positive().max(MAX_ENTRY_REQUESTS),
    submittedAtMs: EpochMs,
    deadlineMs: EpochMs,
  })
  .refine((w) => w.deadlineMs > w.submittedAtMs, { message: "deadlineMs must be after submittedAtMs", path: ["deadlineMs"] });
export type DeferrableWork = z.infer<typeof DeferrableWork>;

/** What one request of a class takes when it runs as batch work at a site: GPU time, and energy above the GPUs' idle draw at the wall. */
export const BatchRequestCost = z.object({ gpuSeconds: z.number().positive(), energyJ: z.number().nonnegative() });
export type BatchRequestCost = z.infer<typeof BatchRequestCost>;

const perSlot = z.array(z.number().nonnegative().finite()).min(1).max(MAX_DEFERRAL_SLOTS);

/**
 * One site over a deferral grid, one value per slot: the carbon intensity of what it draws
 * (gCO2/kWh; a wind site at its life-cycle intensity), the GPUs and the power (W at the wall,
 * above the idle draw of those GPUs) that interactive traffic leaves to batch work, and what a
 * request of each class it can serve costs there. Slot 0 is known; later slots are forecasts.
 */
export const DeferralSite = z.object({
  site: SiteId,
  carbonGPerKwh: perSlot,
  spareGpus: perSlot,
  spareW: perSlot,
  /**
   * The part of `spareGpus` and `spareW` that is there even if the forecast fails (e.g. none of a
   * wind farm's after slot 0): the plan starts now whatever keeps every deadline on firm capacity
   * alone. Absent: the forecast is taken as firm.
   */
  firmSpareGpus: perSlot.optional(),
  firmSpareW: perSlot.optional(),
  costs: z.record(ClassId, BatchRequestCost),
});
export type DeferralSite = z.infer<typeof DeferralSite>;

/**
 * What the deferral scheduler plans over: a grid of `slotMs` slots from `startMs` (slot 0 is
 * the one about to run, the only one it commits), the sites over that grid, and the backlog.
 * Every site covers the same number of slots; every class in the backlog is priced at some site.
 */
export const DeferralInput = z
  .object({
    startMs: EpochMs,
    slotMs: z.number().int().positive(),
    sites: z.array(DeferralSite).min(1).max(256),
    backlog: z.array(DeferrableWork).max(MAX_BACKLOG_ENTRIES),
  })
  .superRefine((input, ctx) => {
    reportDuplicates(ctx, input.sites.map((s) => s.site), (i) => ["sites", i, "site"], "site");
    reportDuplicates(ctx, input.backlog.map((w) => w.id), (i) => ["backlog", i, "id"], "work id");
    const slots = input.sites[0]?.carbonGPerKwh.length ?? 0;
    input.sites.forEach((s, i) => {
      for (const key of ["carbonGPerKwh", "spareGpus", "spareW", "firmSpareGpus", "firmSpareW"] as const) {
        if (s[key] !== undefined && s[key].length !== slots) ctx.addIssue({ code: "custom", message: `${key} has ${s[key].length} slots; the grid has ${slots}`, path: ["sites", i, key] });
      }
    });
    const priced = new Set(input.sites.flatMap((s) => Object.keys(s.costs)));
    input.backlog.forEach((w, i) => {
      if (!priced.has(w.classId)) ctx.addIssue({ code: "custom", message: `no site has a cost for class ${w.classId}`, path: ["backlog", i, "classId"] });
    });
  });
export type DeferralInput = z.infer<typeof DeferralInput>;

/** Whole requests of one backlog entry to start at a site in slot 0. */
export const DeferralCommit = z.object({ workId: z.string().min(1), site: SiteId, requests: z.number().int().positive() });
export type DeferralCommit = z.infer<typeof DeferralCommit>;

/** What the plan puts into one (slot, site): requests (fractional beyond slot 0), GPU time, energy and carbon. */
export const DeferralSlotUse = z.object({
  slot: z.number().int().nonnegative(),
  site: SiteId,
  requests: z.number().nonnegative(),
  gpuSeconds: z.number().nonnegative(),
  energyJ: z.number().nonnegative(),
  carbonG: z.number().nonnegative(),
});
export type DeferralSlotUse = z.infer<typeof DeferralSlotUse>;

/**
 * The deferral scheduler's answer: what starts now (`commit`, whole requests within slot 0's spare
 * capacity), the plan for every slot, and the work it expects to finish after its deadline because
 * capacity ran out (`late`: it runs as soon as it fits, deadlines before carbon). `method` says
 * whether the LP planned it or, where the solver gave no optimum, the greedy fallback (cleanest
 * site with room, earliest deadline first).
 */
export const DeferralPlan = z.object({
  startMs: EpochMs,
  slotMs: z.number().int().positive(),
  method: z.enum(["lp", "greedy-fallback", "empty"]),
  commit: z.array(DeferralCommit),
  slots: z.array(DeferralSlotUse),
  late: z.array(z.object({ workId: z.string().min(1), requests: z.number().positive() })),
  plannedCarbonG: z.number().nonnegative(),
  notes: z.array(z.string()),
});
export type DeferralPlan = z.infer<typeof DeferralPlan>;

/**
 * What the edge does with its queued work that can wait this slot: `release` starts whole requests
 * of backlog entries at a site now (within the slot's spare capacity); `serveNow` is work whose
 * deadline ends with this slot (or has passed) and that found no spare capacity: waiting longer
 * would miss it, so the edge serves it at once as interactive traffic (a flex request then answers
 * with the tier it ran at). Everything else waits for a cleaner slot; `plan` says where it is
 * expected to run.
 */
export const DeferralRelease = z.object({
  release: z.array(DeferralCommit),
  serveNow: z.array(z.object({ workId: z.string().min(1), requests: z.number().int().positive() })),
  plan: DeferralPlan,
});
export type DeferralRelease = z.infer<typeof DeferralRelease>;
