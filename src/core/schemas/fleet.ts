import { z } from "zod";
import { knownPerfModel } from "../model/model-identity.ts";
import { reportDuplicates } from "./checks.ts";
import { GpuType, ModelId, SiteId, VariantId } from "./ids.ts";
import { ClassScheme, RequestClass } from "./request-class.ts";

/** A model variant's name within its model, e.g. "base", "int8", "distill-8b" (the profile table's `variant`). */

/**
 * Where a wind site's power series comes from, as a label: a file replayed from disk, or a stored
 * forecast. The edge's planners read neither: they plan a wind site on the `power_available`
 * forecasts whose subject is the site's id (the operator's or the site agent's).
 */
export const SeriesRef = z.discriminatedUnion("kind", [
  z.strictObject({ kind: z.literal("file"), path: z.string().min(1), column: z.string().min(1).optional() }),
  z.strictObject({ kind: z.literal("forecast"), forecastId: z.string().min(1) }),
]);
export type SeriesRef = z.infer<typeof SeriesRef>;

/**
 * Life-cycle intensity of onshore wind, gCO2e/kWh: the median of IPCC AR5 WG3 Annex III, Table A.III.2.
 * Wind-powered energy is counted at this intensity rather than zero.
 */
export const WIND_LIFECYCLE_G_PER_KWH = 11;

/** A site's power envelope: a wind farm (Heron), a grid connection, or a fixed cap. */
export const PowerSource = z.discriminatedUnion("kind", [
  z.strictObject({
    kind: z.literal("wind"),
    series: SeriesRef,
    peakMw: z.number().positive(),
    /** The site is right-sized to this percentile of its generation (Heron: a low one, e.g. 10). */
    rightSizingPercentile: z.number().min(0).max(100),
    lifecycleGPerKwh: z.number().nonnegative().default(WIND_LIFECYCLE_G_PER_KWH),
  }),
  z.strictObject({
    kind: z.literal("grid"),
    /** Grid region or balancing authority, e.g. "CAISO_NORTH", "DE", "GB". */
    region: z.string().min(1),
    capW: z.number().positive().optional(),
  }),
  z.strictObject({ kind: z.literal("fixed"), capW: z.number().positive() }),
]);
export type PowerSource = z.infer<typeof PowerSource>;

/** Average (attributional) or marginal emissions; FREESH plans on marginal ones. */
export const CarbonSignal = z.enum(["average", "marginal"]);
export type CarbonSignal = z.infer<typeof CarbonSignal>;

const signal = { signal: CarbonSignal.default("average") };

/** Where a site's grid carbon intensity comes from. */
export const CarbonSource = z.discriminatedUnion("kind", [
  z.strictObject({ kind: z.literal("electricitymaps"), zone: z.string().min(1), ...signal }),
  z.strictObject({ kind: z.literal("watttime"), region: z.string().min(1), ...signal }),
  /** UK Carbon Intensity API region ids: 1..17 are DNO regions, 18..20 England, Scotland, Wales. */
  z.strictObject({ kind: z.literal("uk-carbon-intensity"), regionId: z.number().int().min(1).max(20), ...signal }),
  z.strictObject({ kind: z.literal("replay"), path: z.string().min(1), column: z.string().min(1), ...signal }),
  z.strictObject({ kind: z.literal("fixed"), gPerKwh: z.number().nonnegative(), ...signal }),
]);
export type CarbonSource = z.infer<typeof CarbonSource>;

/**
 * The most GPUs one site may hold, all types together. The largest single sites built hold about
 * 10^5 GPUs, and the largest fleet the repo plans (Heron's reproduction) about 170k over 4 sites;
 * a million is 5x the former and still cheap to plan, while a typo'd count (10^9) ties a planner up
 * for seconds.
 */
export const MAX_SITE_GPUS = 1_000_000;

const SiteGpus = z
  .array(z.strictObject({ type: GpuType, count: z.number().int().positive().max(MAX_SITE_GPUS, `a site holds at most ${MAX_SITE_GPUS} GPUs`) }))
  .min(1)
  // A count over the bound on its own is reported at that count, not again here.
  .refine((gpus) => gpus.some((g) => g.count > MAX_SITE_GPUS) || gpus.reduce((n, g) => n + g.count, 0) <= MAX_SITE_GPUS, { message: `a site holds at most ${MAX_SITE_GPUS} GPUs, all types together` });

/** One GPU site: where it is, what it has, what powers it and how its carbon is measured. */
export const Site = z.strictObject({
  id: SiteId,
  region: z.string().min(1),
  ingressUrl: z.url({ protocol: /^https?$/ }),
  gpus: SiteGpus,
  power: PowerSource,
  carbon: CarbonSource,
  /** Estimated round trip in ms from each edge region (e.g. a Cloudflare colo or continent code) to the site. */
  rttMs: z.record(z.string().min(1), z.number().nonnegative()).default({}),
});
export type Site = z.infer<typeof Site>;

/**
 * A model as clients, the engine and the performance model know it. `id` is its name in the API
 * (what clients put in `model`); the engine serves it under `servedName` (vLLM's and SGLang's
 * `--served-model-name`) and loads `weights` (a Hugging Face repo id or a path on the site), both
 * the id by default; `perfModel` is its key in the performance model (src/core/model/llm-specs.ts),
 * the id by default when the model knows that id. A model the performance model does not know runs
 * on its measured profile (`greenference agent profile`).
 */
export const Model = z.strictObject({
  id: ModelId,
  description: z.string().optional(),
  servedName: z.string().min(1).max(256).optional(),
  weights: z.string().min(1).max(1024).optional(),
  perfModel: z.string().min(1).max(128).optional(),
});
export type Model = z.infer<typeof Model>;

/** One servable variant of a model (a quantisation, a distillation, a size in a family). */
export const ModelVariant = z.strictObject({
  model: ModelId,
  id: VariantId,
  /** Quality in [0, 1]: a benchmark accuracy as a fraction or a normalised score (Clover's accuracy). */
  quality: z.number().min(0).max(1),
  memoryGb: z.number().positive(),
  parameterCount: z.number().positive(),
});
export type ModelVariant = z.infer<typeof ModelVariant>;

/** The selectable policies: one per seed paper, and the combined one. */
export const PolicyKind = z.enum(["heron", "clover", "freesh", "dynamollm", "greenserve", "greenference"]);
export type PolicyKind = z.infer<typeof PolicyKind>;

/**
 * The largest objective weight. Weights are relative prices (per gram, per Wh, per request-second,
 * per quality point lost), so only their ratios matter; the largest the repo uses is Clover's
 * combined run's carbon weight, about 4 x 10^5 at its smallest requests on the cleanest grid
 * (bench/reproduce/clover-combined.ts), most are 0.01 to 10^3. Far larger ones overflow the
 * planners' LP coefficients (1e308 makes them NaN).
 */
export const MAX_POLICY_WEIGHT = 1_000_000;

const weight = z.number().nonnegative().max(MAX_POLICY_WEIGHT, `a weight is at most ${MAX_POLICY_WEIGHT}; only the weights' ratios matter, so scale them all down`).default(0);

/** Objective weights, each from 0 to MAX_POLICY_WEIGHT; a weight left out is 0, and at least one must be positive. */
export const PolicyWeights = z
  .strictObject({ carbon: weight, energy: weight, latency: weight, accuracy: weight })
  .refine((w) => w.carbon + w.energy + w.latency + w.accuracy > 0, { message: "at least one weight must be positive" });
export type PolicyWeights = z.infer<typeof PolicyWeights>;

export const Policy = z.strictObject({ kind: PolicyKind, weights: PolicyWeights });
export type Policy = z.infer<typeof Policy>;

/** The same kind and the same weights (of parsed policies, which have every weight). */
export function samePolicy(a: Policy, b: Policy): boolean {
  const weights = Object.keys(a.weights) as (keyof PolicyWeights)[];
  return a.kind === b.kind && weights.length === Object.keys(b.weights).length && weights.every((w) => a.weights[w] === b.weights[w]);
}

/**
 * The whole fleet as the operator configures it; its objects are strict, so a misspelt key is an
 * error naming it rather than a field silently left at its default. Cross-field rules: unique site ids and GPU types per
 * site, unique models and (model, variant) pairs, every variant of a known model and every model with
 * a variant, and exactly one class with an SLO for every class of the scheme.
 *
 * @example
 * const fleet = Fleet.parse(await request.json()); // throws a ZodError whose issues name the field
 */
export const Fleet = z
  .strictObject({
    sites: z.array(Site).min(1),
    models: z.array(Model).min(1),
    variants: z.array(ModelVariant).min(1),
    classScheme: ClassScheme,
    classes: z.array(RequestClass).min(1),
    policy: Policy,
    /**
     * Plans keep, for every model they serve, an instance at a second site (a standby at the
     * cleanest site with room when the planner put the model at one site only), which routing
     * turns to as soon as the sites serving the model stop answering. On by default; the plan
     * reports the standby's idle power and carbon (`Plan.standby`).
     */
    standby: z.boolean().default(true),
  })
  .superRefine((fleet, ctx) => {
    reportDuplicates(ctx, fleet.sites.map((s) => s.id), (i) => ["sites", i, "id"], "site id");
    fleet.sites.forEach((s, i) => reportDuplicates(ctx, s.gpus.map((g) => g.type), (j) => ["sites", i, "gpus", j, "type"], "GPU type"));
    reportDuplicates(ctx, fleet.models.map((m) => m.id), (i) => ["models", i, "id"], "model id");
    reportDuplicates(ctx, fleet.variants.map((v) => `${v.model}/${v.id}`), (i) => ["variants", i, "id"], "variant of this model");
    fleet.models.forEach((m, i) => {
      if (m.perfModel !== undefined && !knownPerfModel(m.perfModel)) ctx.addIssue({ code: "custom", message: `the performance model does not know "${m.perfModel}"; leave perfModel out to run the model on its measured profile`, path: ["models", i, "perfModel"] });
    });
    const models = new Set<string>(fleet.models.map((m) => m.id));
    fleet.variants.forEach((v, i) => {
      if (!models.has(v.model)) ctx.addIssue({ code: "custom", message: `unknown model "${v.model}"`, path: ["variants", i, "model"] });
    });
    const withVariants = new Set<string>(fleet.variants.map((v) => v.model));
    fleet.models.forEach((m, i) => {
      if (!withVariants.has(m.id)) ctx.addIssue({ code: "custom", message: `model "${m.id}" has no variant`, path: ["models", i] });
    });
    checkClasses(fleet.classScheme, fleet.classes, ctx);
  });
export type Fleet = z.infer<typeof Fleet>;

/** The same fleet, field for field, whatever order the keys of its objects came in (`rttMs` is a record). */
export function sameFleet(a: Fleet, b: Fleet): boolean {
  return sortedKeysJson(a) === sortedKeysJson(b);
}

/**
 * Whether two fleets plan alike: the same but for where the sites are reached (`ingressUrl`), which
 * no planner reads (routing takes it from the fleet as it stands).
 */
export function samePlanningFleet(a: Fleet, b: Fleet): boolean {
  const unreached = (f: Fleet) => ({ ...f, sites: f.sites.map((s) => ({ ...s, ingressUrl: "" })) });
  return sameFleet(unreached(a), unreached(b));
}

function sortedKeysJson(value: unknown): string {
  return JSON.stringify(value, (_, v: unknown) => (v !== null && typeof v === "object" && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v));
}

/** Every class must sit in the scheme's bins under its own label, once; every scheme class needs one (for its SLO). */
function checkClasses(scheme: ClassScheme, classes: readonly RequestClass[], ctx: z.RefinementCtx): void {
  reportDuplicates(ctx, classes.map((c) => c.id), (i) => ["classes", i, "id"], "class id");
  classes.forEach((c, i) => {
    const input = scheme.inputLabels[c.inputBin];
    const output = scheme.outputLabels[c.outputBin];
    if (input === undefined) ctx.addIssue({ code: "custom", message: `no input bin ${c.inputBin} in scheme "${scheme.name}"`, path: ["classes", i, "inputBin"] });
    if (output === undefined) ctx.addIssue({ code: "custom", message: `no output bin ${c.outputBin} in scheme "${scheme.name}"`, path: ["classes", i, "outputBin"] });
    if (input !== undefined && output !== undefined && c.id !== input + output) {
      ctx.addIssue({ code: "custom", message: `class in bins (${c.inputBin}, ${c.outputBin}) must be named "${input + output}"`, path: ["classes", i, "id"] });
    }
  });
  const named = new Set<string>(classes.map((c) => c.id));
  const missing = scheme.inputLabels.flatMap((i) => scheme.outputLabels.map((o) => i + o)).filter((id) => !named.has(id));
  if (missing.length > 0) ctx.addIssue({ code: "custom", message: `no SLO for class ${missing.join(", ")}`, path: ["classes"] });
}
