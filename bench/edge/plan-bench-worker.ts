import { z } from "zod";
import type { Plan } from "../../src/core/schemas/plan.ts";
import type { ProfileRow } from "../../src/core/schemas/profile.ts";
import edge from "../../src/index.ts";
import { workerHighsSolver } from "../../src/solver/highs-worker-solver.ts";
import { benchPlannerL, benchPlannerS, planBenchInstance, planBenchProfile, type BenchClocks, type PlanBenchInstance } from "../plan-bench.ts";

export { BatchDO, CarbonLedgerDO, ControlDO, DeferralDO, PredictorDO, RateLimiterDO, SiteDO } from "../../src/index.ts";

const Query = z.object({
  step: z.enum(["load", "prepare", "l", "s"]),
  sites: z.coerce.number().int().min(1).max(256).default(1),
  seed: z.coerce.number().int().min(1).max(1_000_000).default(1),
});

// In local workerd the clock advances while code runs (deployed, it would not: Spectre mitigation).
const clocks: BenchClocks = { wall: () => performance.now() };
const profiles = new Map<number, ProfileRow[]>();
const instances = new Map<string, { instance: PlanBenchInstance; plan?: Plan }>();

/**
 * The edge Worker with one route more, for `greenference plan --bench --in-worker` alone (never
 * deployed: wrangler.toml's main is src/index.ts). `GET /__bench/plan?step=...&sites=N&seed=S` runs
 * one step of the plan bench in this isolate on HiGHS's WebAssembly as a Worker module
 * (`workerHighsSolver`, what the cron and ControlDO's Planner-S plan on): `load` loads it,
 * `prepare` builds the instance, `l` runs Planner-L and keeps its plan, `s` runs Planner-S once on
 * that plan. One step per request, so the caller can
 * read workerd's CPU time around each. Every other request goes to the edge Worker.
 */
export default {
  ...edge,
  async fetch(request, env, ctx) {
    const url = new URL(request.url);
    if (url.pathname !== "/__bench/plan") return edge.fetch(request, env, ctx);
    const query = Query.safeParse(Object.fromEntries(url.searchParams));
    if (!query.success) return Response.json({ error: query.error.issues[0]!.message }, { status: 400 });
    const { step, sites, seed } = query.data;
    const t = performance.now();
    const solver = await workerHighsSolver();
    if (step === "load") return Response.json({ load_ms: performance.now() - t });
    const key = `${seed}:${sites}`;
    if (step === "prepare") {
      if (!profiles.has(seed)) profiles.set(seed, planBenchProfile(seed));
      const profile = profiles.get(seed)!;
      instances.set(key, { instance: planBenchInstance(sites, seed, profile) });
      return Response.json({ profile_rows: profile.length });
    }
    const held = instances.get(key);
    if (!held) return Response.json({ error: `no instance of ${sites} sites (seed ${seed}) in this isolate: run step=prepare first` }, { status: 409 });
    if (step === "l") {
      const { timing, plan } = benchPlannerL(held.instance.input, solver, clocks);
      held.plan = plan;
      return Response.json(timing);
    }
    if (!held.plan) return Response.json({ error: `no Planner-L plan of ${sites} sites in this isolate: run step=l first` }, { status: 409 });
    return Response.json(benchPlannerS(held.instance, held.plan, solver, clocks, 1));
  },
} satisfies ExportedHandler<Env>;
