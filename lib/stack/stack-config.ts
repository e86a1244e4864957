import { defaultDataDir } from "../../host-agent/data/default-data-dir.ts";
import { z } from "zod";
import { variantLlmSpec } from "../../src/core/model/llm-specs.ts";
import { POLICIES } from "../../src/core/policies/registry.ts";
import { PolicyKind } from "../../src/core/schemas/fleet.ts";

/** One simulated site of the local stack: a wind farm (its region's WND series) or a grid connection. */
export const StackSite = z.discriminatedUnion("kind", [
  z.strictObject({
    kind: z.literal("wind"),
    id: z.string().regex(/^[a-z0-9][a-z0-9-]*$/),
    /** Balancing authority whose WND column (<dataDir>/grid-2022/<region>-2022H1.csv) drives the envelope. */
    region: z.string().min(1),
    gpus: z.number().int().positive().max(64),
    /** The farm is right-sized so this percentile of its generation runs every GPU flat out (Heron). */
    rightSizingPercentile: z.number().min(1).max(99).default(20),
  }),
  z.strictObject({
    kind: z.literal("grid"),
    id: z.string().regex(/^[a-z0-9][a-z0-9-]*$/),
    /** Balancing authority whose avg_CI column the local carbon provider serves for this site. */
    region: z.string().min(1),
    gpus: z.number().int().positive().max(64),
  }),
]);
export type StackSite = z.infer<typeof StackSite>;

/**
 * What a policy that carves GPUs into MIG slices runs on when the configuration does not say:
 * simulated A100s serving Clover's Qwen2.5 family (7B, 14B, 32B, within its quality spread), profiled
 * at TP1 (a slice runs one GPU's share).
 */
const MIG_DEFAULTS = { gpuType: "A100-80GB", model: "qwen2.5", variants: ["7b", "14b", "32b"], tps: [1] };

/**
 * Everything `greenference start` runs with; every field has a default, so `npm start` needs no
 * file. `--config FILE` (JSON) and flags override it; a policy that uses MIG gets `MIG_DEFAULTS`
 * for what they leave out.
 */
export const StackConfig = z.preprocess((raw) => withPolicyDefaults(raw), z.strictObject({
  /** The data folder (grid series, the Azure trace): the package's own data/ unless given. */
  dataDir: z.string().min(1).default(defaultDataDir),
  /** Port of `wrangler dev`; 0 picks a free one. */
  edgePort: z.number().int().min(0).max(65535).default(8787),
  /**
   * Keep wrangler dev's DevTools network capture on. Off by default: it reports every fetch the
   * Worker makes to DevTools, which adds about 4 ms to each request the edge forwards to a site.
   */
  devtoolsNetworkCapture: z.boolean().default(false),
  /** Series seconds per wall second: wind and carbon move this much faster than real time. */
  speed: z.number().positive().max(3600).default(60),
  /**
   * Where in the 2022H1 series the replay starts. The default is an early morning when BPAT's wind
   * falls to a quarter of what its site can use within three hours while ERCO's climbs back, so the
   * first minutes show plans cut to the envelopes and traffic moving between the sites.
   */
  seriesStart: z.iso.datetime({ offset: true }).default("2022-02-27T04:00:00Z"),
  sites: z
    .array(StackSite)
    .min(1)
    .default([
      { kind: "wind", id: "wind-bpat", region: "BPAT", gpus: 8, rightSizingPercentile: 20 },
      { kind: "wind", id: "wind-erco", region: "ERCO", gpus: 8, rightSizingPercentile: 20 },
      { kind: "grid", id: "grid-ciso", region: "CISO", gpus: 8 },
    ]),
  gpuType: z.enum(["H100-80GB", "A100-80GB"]).default("H100-80GB"),
  /** The model served (a performance-model key): a 70B model draws kilowatts per instance, so power matters. */
  model: z.string().min(1).default("llama3-70b"),
  /** The model's variants the fleet offers (each profiled); default its one "base" variant. */
  variants: z.array(z.string().regex(/^[A-Za-z0-9._-]{1,64}$/)).min(1).default(["base"]),
  /** TP degrees profiled and planned. */
  tps: z.array(z.number().int().positive()).min(1).default([2, 4, 8]),
  /** The fleet policy (any of the registry's: src/core/policies), the combined one by default. */
  policy: PolicyKind.default("greenference"),
  /** Requests per wall second the load generator sends (the trace's arrivals rescaled to this mean). */
  loadRps: z.number().nonnegative().default(2),
  /** Request trace replayed by the load generator (Azure format); relative to dataDir unless absolute. */
  trace: z.string().min(1).default("azure-llm-2023/AzureLLMInferenceTrace_conv.csv"),
  /** Output tokens are capped at this in generated requests, so a request lasts seconds, not minutes. */
  maxOutputTokens: z.number().int().positive().default(400),
  /** The planning slot in series seconds (Heron: 15 minutes): the power forecasts the stack posts cover it. */
  replanEverySeriesS: z.number().positive().default(900),
  /** The 5-minute cron (forecast refresh, then the fleet planner when its policy's cadence is due) runs every this many series seconds. */
  refreshEverySeriesS: z.number().positive().default(300),
  /** Simulated engine seconds per wall second (1: requests take as long as on the GPU). */
  engineSpeed: z.number().positive().max(100).default(1),
  seed: z.number().int().nonnegative().default(1),
  /** The edge's idle timeout on a site's answer after its head (the Worker's SITE_IDLE_TIMEOUT_S; the fault bench shortens it). */
  siteIdleTimeoutS: z.number().positive().max(600).default(60),
  /** Folder for wrangler's local state and the cached profile table; a fresh one per run when absent. */
  stateDir: z.string().min(1).optional(),
}).superRefine((c, ctx) => {
  // The stack profiles every variant on the performance model, so each must be one it knows.
  for (const variant of c.variants) {
    try {
      variantLlmSpec(c.model, variant);
    } catch (error) {
      ctx.addIssue({ code: "custom", path: ["model"], message: (error as Error).message });
      return;
    }
  }
}));
export type StackConfig = z.infer<typeof StackConfig>;

/**
 * The stack at the scale the e2e tests and the stack benches run it: a free edge port, engines 10x
 * faster than real time, the default three sites at 4 GPUs each (wind without right-sizing), and
 * `over` on top.
 *
 * @example
 * const config = smallStackConfig({ model: "llama3.1-8b", tps: [1, 2] }); // 3 sites x 4 GPUs
 */
export function smallStackConfig(over: Partial<StackConfig> = {}): StackConfig {
  return StackConfig.parse({
    edgePort: 0,
    engineSpeed: 10,
    sites: [
      { kind: "wind", id: "wind-bpat", region: "BPAT", gpus: 4 },
      { kind: "wind", id: "wind-erco", region: "ERCO", gpus: 4 },
      { kind: "grid", id: "grid-ciso", region: "CISO", gpus: 4 },
    ],
    ...over,
  });
}

function withPolicyDefaults(raw: unknown): unknown {
  if (typeof raw !== "object" || raw === null) return raw;
  const policy = PolicyKind.safeParse((raw as { policy?: unknown }).policy ?? "greenference");
  if (!policy.success || !POLICIES[policy.data].usesMig) return raw;
  const given = raw as { model?: unknown; variants?: unknown };
  const family = given.model === undefined && given.variants === undefined ? { model: MIG_DEFAULTS.model, variants: MIG_DEFAULTS.variants, tps: MIG_DEFAULTS.tps } : {};
  return { gpuType: MIG_DEFAULTS.gpuType, ...family, ...raw };
}
