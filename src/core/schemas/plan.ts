import { z } from "zod";
import { reportDuplicates } from "./checks.ts";
import { PolicyKind } from "./fleet.ts";
import { ClassId, EpochMs, InstanceId, ModelId, SiteId, VariantId } from "./ids.ts";
import { fitsOneGpu, MigSlice } from "./mig.ts";

/**
 * How an instance's GPU clock is set: locked at one frequency, or left to a local controller that
 * stays within bounds (GreenServe's EcoFreq per iteration, FREESH's MIAD, DynamoLLM's 5 s manager).
 */
export const ClockSetting = z.discriminatedUnion("mode", [
  z.object({ mode: z.literal("locked"), mhz: z.number().positive() }),
  z
    .object({
      mode: z.literal("policy"),
      policy: z.enum(["ecofreq", "miad", "instance-manager"]),
      minMhz: z.number().positive(),
      maxMhz: z.number().positive(),
    })
    .refine((c) => c.minMhz <= c.maxMhz, { message: "maxMhz must be at least minMhz", path: ["maxMhz"] }),
]);
export type ClockSetting = z.infer<typeof ClockSetting>;

/** The clock policies a plan may give an instance (a site controller within bounds). */
export type ClockPolicyName = Extract<ClockSetting, { mode: "policy" }>["policy"];

/**
 * How a site's gateway orders the requests waiting for a replica: `fifo-rr` in arrival order,
 * `llf` least laxity first (FREESH §3.3); either way they go to replicas in turn.
 */
export const QueueDiscipline = z.enum(["fifo-rr", "llf"]);
export type QueueDiscipline = z.infer<typeof QueueDiscipline>;

/**
 * How a site's gateway picks among replicas of a decode pool (EcoRoute, GreenServe Algorithm 2):
 * `spread` as the paper does, `pack` within GEMM tiles (the combined policy).
 */
export const DecodeRouting = z.enum(["spread", "pack"]);
export type DecodeRouting = z.infer<typeof DecodeRouting>;

/**
 * How a site's gateway balances requests among its instances: `as-routed` keeps each on the
 * instance the edge chose; `join-idle` (the combined policy) moves one, when every replica of that
 * instance has requests waiting for admission, to a replica with none waiting and a free slot of
 * another instance of its class at the site, else of its model (bursts go where the site has room).
 */
export const GatewayBalance = z.enum(["as-routed", "join-idle"]);
export type GatewayBalance = z.infer<typeof GatewayBalance>;

export const InstanceRole = z.enum(["prefill", "decode", "mixed"]);
export type InstanceRole = z.infer<typeof InstanceRole>;

/** Requests per second per class. */
export const ClassRates = z.record(ClassId, z.number().nonnegative());
export type ClassRates = z.infer<typeof ClassRates>;

/**
 * One engine instance a site should run, or `replicas` identical ones (large sites run thousands):
 * `gpus` are the site's GPU indices, `tp` per instance, so an entry holds tp x replicas of them.
 * With `mig`, each replica runs on one MIG slice of that profile carved from its GPU (`tp` 1; a
 * GPU may appear once per slice it gives the entry).
 */
export const PlannedInstance = z
  .object({
    id: InstanceId,
    model: ModelId,
    variant: VariantId,
    tp: z.number().int().positive(),
    replicas: z.number().int().positive().default(1),
    gpus: z.array(z.number().int().nonnegative()).min(1),
    role: InstanceRole.default("mixed"),
    clock: ClockSetting,
    /** Load the planner expects this entry (all its replicas together) to serve. */
    loadRps: ClassRates.default({}),
    /** The class the entry was sized for, where it also serves classes it dominates (spilled load). */
    sizedFor: ClassId.optional(),
    /** The MIG slice each replica runs on (Clover); absent: whole GPUs. */
    mig: MigSlice.optional(),
  })
  .refine((i) => i.tp * i.replicas === i.gpus.length, { message: "tp x replicas must equal the number of GPU indices", path: ["tp"] })
  .refine((i) => i.mig === undefined || i.tp === 1, { message: "an instance on MIG slices runs one slice per replica (tp 1)", path: ["tp"] });
export type PlannedInstance = z.infer<typeof PlannedInstance>;

/**
 * What one site runs: its instances, its power cap, and how its gateway queues and routes (set by
 * the fleet's policy, see `src/core/policies`). A GPU goes whole to one instance, or is carved into
 * MIG slices that fit it.
 */
export const SitePlan = z
  .object({
    site: SiteId,
    powerCapW: z.number().positive(),
    instances: z.array(PlannedInstance),
    /** Absent: fifo-rr. */
    queue: QueueDiscipline.optional(),
    /** Absent: spread. */
    decodeRouting: DecodeRouting.optional(),
    /** Absent: as-routed. */
    balance: GatewayBalance.optional(),
  })
  .superRefine((site, ctx) => {
    reportDuplicates(ctx, site.instances.map((i) => i.id), (i) => ["instances", i, "id"], "instance id");
    const whole = new Set<number>();
    const slices = new Map<number, MigSlice[]>();
    site.instances.forEach((inst, i) =>
      inst.gpus.forEach((gpu, g) => {
        const path = ["instances", i, "gpus", g];
        if (whole.has(gpu) || (inst.mig === undefined && slices.has(gpu))) ctx.addIssue({ code: "custom", message: `GPU ${gpu} is already given to another instance`, path });
        if (inst.mig === undefined) return void whole.add(gpu);
        const carved = [...(slices.get(gpu) ?? []), inst.mig];
        if (!fitsOneGpu(carved)) ctx.addIssue({ code: "custom", message: `GPU ${gpu} cannot hold MIG slices ${carved.join(", ")}`, path });
        slices.set(gpu, carved);
      }),
    );
  });
export type SitePlan = z.infer<typeof SitePlan>;

/** One routing target of a class: an instance at a site, with a weighted round-robin weight. */
export const RouteTarget = z.object({ site: SiteId, instance: InstanceId, weight: z.number().nonnegative() });
export type RouteTarget = z.infer<typeof RouteTarget>;

/** Per class, its targets; a class listed with targets must have a positive total weight. */
export const Routing = z.record(ClassId, z.array(RouteTarget)).superRefine((routing, ctx) => {
  for (const [classId, targets] of Object.entries(routing)) {
    reportDuplicates(ctx, targets.map((t) => `${t.site}/${t.instance}`), (j) => [classId, j], "target");
    if (targets.length > 0 && targets.reduce((sum, t) => sum + t.weight, 0) <= 0) {
      ctx.addIssue({ code: "custom", message: `class ${classId} has targets but all weights are 0`, path: [classId] });
    }
  }
});
export type Routing = z.infer<typeof Routing>;

/**
 * An instance a plan keeps at a second site of its model for failover: it has no planned load and
 * no routing weight, and routing sends a request to it only when no instance the plan routes to
 * can take it (the site serving the model stopped answering). The plan reports what it costs.
 */
export const StandbyInstance = z.object({
  model: ModelId,
  site: SiteId,
  instance: InstanceId,
  /** What it draws while it idles: its GPUs' idle power x the server overhead, W. */
  idlePowerW: z.number().nonnegative(),
  /** That power's carbon at the site's intensity over the slot, gCO2e per hour; null when the intensity is not known. */
  gco2ePerHour: z.number().nonnegative().nullable(),
});
export type StandbyInstance = z.infer<typeof StandbyInstance>;

/**
 * The highest plan version (2^31 - 1: a new plan every second for 68 years). Versions stay far
 * from 2^53, where the planners' `version + 1` would stop being a new number; the plan store also
 * bounds how far one upload may jump (PLAN_VERSION_STEP_MAX).
 */
export const PLAN_VERSION_MAX = 2 ** 31 - 1;
/** The most one plan may advance the version past the current one. */
export const PLAN_VERSION_STEP_MAX = 1_000;

/**
 * A global plan from Planner-L (or a pool planner): what every site runs and how each class is
 * routed. Versions increase monotonically; a plan that cannot serve everything says how much it
 * leaves unserved per class in `shortfall` rather than failing.
 */
export const Plan = z
  .object({
    version: z.number().int().nonnegative().max(PLAN_VERSION_MAX),
    createdAtMs: EpochMs,
    validUntilMs: EpochMs,
    policy: PolicyKind,
    /** The Planner-S correction applied to this version (see `PlanDelta`); absent or 0 as the planner made it. */
    revision: z.number().int().nonnegative().optional(),
    sites: z.array(SitePlan),
    routing: Routing,
    /** Unserved req/s per class when demand exceeded what the plan could serve. */
    shortfall: ClassRates.default({}),
    /** Req/s per class planned on operating points that miss the class's SLO, where none within it had room. */
    outsideSloRps: ClassRates.optional(),
    /** Standby instances for failover (the fleet's `standby` setting) and their cost. */
    standby: z.array(StandbyInstance).optional(),
    notes: z.array(z.string()).default([]),
  })
  .superRefine((plan, ctx) => {
    if (plan.validUntilMs <= plan.createdAtMs) ctx.addIssue({ code: "custom", message: "validUntilMs must be after createdAtMs", path: ["validUntilMs"] });
    reportDuplicates(ctx, plan.sites.map((s) => s.site), (i) => ["sites", i, "site"], "site");
    const instances = new Map<string, Set<string>>(plan.sites.map((s) => [s.site, new Set(s.instances.map((i) => i.id))]));
    for (const [classId, targets] of Object.entries(plan.routing)) {
      targets.forEach((t, j) => {
        const atSite = instances.get(t.site);
        if (!atSite) ctx.addIssue({ code: "custom", message: `site "${t.site}" is not in the plan`, path: ["routing", classId, j, "site"] });
        else if (!atSite.has(t.instance)) ctx.addIssue({ code: "custom", message: `no instance "${t.instance}" at site "${t.site}"`, path: ["routing", classId, j, "instance"] });
      });
    }
    (plan.standby ?? []).forEach((s, j) => {
      const inst = plan.sites.find((x) => x.site === s.site)?.instances.find((i) => i.id === s.instance);
      if (!inst || inst.model !== s.model) ctx.addIssue({ code: "custom", message: `no instance "${s.instance}" of model "${s.model}" at site "${s.site}"`, path: ["standby", j, "instance"] });
    });
    const served = new Set(plan.sites.flatMap((s) => s.instances.flatMap((i) => Object.entries(i.loadRps).filter(([, rps]) => rps > 0).map(([c]) => c))));
    for (const classId of served) {
      if ((plan.routing[classId as ClassId] ?? []).length === 0) ctx.addIssue({ code: "custom", message: `class ${classId} has planned load but no routing targets`, path: ["routing", classId] });
    }
  });
export type Plan = z.infer<typeof Plan>;

/**
 * A Planner-S correction to plan `baseVersion`: new clock settings for some instances and new
 * routing weights for some classes (a class listed here replaces its whole target list). Instances,
 * TP and GPU assignments never change in a delta.
 */
export const PlanDelta = z
  .object({
    baseVersion: z.number().int().nonnegative(),
    createdAtMs: EpochMs,
    clocks: z.array(z.object({ site: SiteId, instance: InstanceId, clock: ClockSetting })).default([]),
    routing: Routing.default({}),
  })
  .superRefine((delta, ctx) => {
    reportDuplicates(ctx, delta.clocks.map((c) => `${c.site}/${c.instance}`), (i) => ["clocks", i], "instance");
  });
export type PlanDelta = z.infer<typeof PlanDelta>;
