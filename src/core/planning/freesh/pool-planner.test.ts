import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { loadFreesh } from "../../../../host-agent/data/read-data-file.ts";
import { FREESH_TYPES } from "../../data/freesh-series.ts";
import { Plan } from "../../schemas/plan.ts";
import { javascriptLpSolver } from "../../../solver/javascript-lp-solver.ts";
import { PlanningInput } from "../planning-input.ts";
import { gpuRanges, gpuTypeAt } from "../site-gpus.ts";
import { freeshEpisodeInput, type FreeshData } from "./pool-from-data.ts";
import { FreeshPoolInput } from "./pool-input.ts";
import { poolPlan } from "./pool-plan.ts";
import { FreeshPoolPlannerConfig, freeshPoolPlanner } from "./pool-planner.ts";
import { solveFreeshPool } from "./pool-solve.ts";

const solver = javascriptLpSolver();
const GPU = { A100: "A100-80GB", H100: "H100-80GB" } as const;
const MHZ = { A100: 1410, H100: 1980 } as const;
const SITE_IDS = ["dc-a", "dc-b", "dc-c"];
let data: FreeshData;
beforeAll(async () => {
  data = await loadFreesh(join(process.cwd(), "data/freesh"));
});

/** FREESH's partition b, episode 24, as a fleet planning input: its profile as rows at the top clock. */
function planningInput(): PlanningInput {
  const p = data.profiles.partitions.b;
  const episode = FreeshPoolInput.parse(freeshEpisodeInput(data, { episode: 24 })).partitions[1]!;
  const profile = FREESH_TYPES.flatMap((classId, r) =>
    data.profiles.modes.flatMap((mode, m) => {
      const [kind, tp] = Object.entries(mode.gpus).find(([, n]) => n > 0) as ["A100" | "H100", number];
      const qps = p.max_qps[r]![m]!;
      if (qps <= 0) return [];
      const ms = (x: number) => ({ p50: x, p99: x });
      return [{ model: "llama3-70b", gpu: GPU[kind], tp, mhz: MHZ[kind], classId, loadRps: qps, ttftMs: ms(p.ttft_ms[r]![m]!), tbtMs: ms(p.tbt_ms[r]![m]!), e2eMs: ms(p.latency_s[r]![m]! * 1e3), peakPowerW: p.power_w[r]![m]!, avgPowerW: p.power_w[r]![m]!, energyPerRequestJ: p.power_w[r]![m]! / qps, stable: true }];
    }),
  );
  return PlanningInput.parse({
    version: 3,
    nowMs: 1_700_000_000_000,
    horizonMs: 30 * 60 * 1000,
    model: "llama3-70b",
    sites: data.profiles.sites_gpus.map((g, n) => ({ id: SITE_IDS[n], powerW: 1e6, gpus: Object.entries(g).filter(([, c]) => c > 0).map(([k, c]) => ({ type: GPU[k as "A100" | "H100"], count: c })) })),
    classes: FREESH_TYPES.map((id, r) => ({ id, inputBin: r >> 1, outputBin: r & 1, slo: { ttftMs: data.profiles.slo.ttft_ms[r], tbtMs: data.profiles.slo.tbt_ms[r] }, demandRps: Math.max(...episode.demandQps.map((row) => row[r]!)) })),
    profile,
  });
}

describe("FREESH pool planner as a Planner", () => {
  it("turns the episode's pool decision into a valid plan with replicas and MIAD clocks", () => {
    const input = FreeshPoolInput.parse(freeshEpisodeInput(data, { episode: 24 }));
    const result = solveFreeshPool(input, solver);
    const plan = poolPlan(input, result, {
      version: 1, nowMs: 0, horizonMs: 1_800_000, model: "llama3-70b" as never, variant: "base" as never,
      sites: planningInput().sites, gpuTypes: GPU, classIds: FREESH_TYPES.map((t) => t as never),
    });
    expect(() => Plan.parse(plan)).not.toThrow();
    const instances = plan.sites.flatMap((s) => s.instances);
    expect(instances.reduce((n, i) => n + i.replicas, 0)).toBe(result.workers.reduce((n, w) => n + w.workers, 0));
    expect(instances.some((i) => i.replicas > 1)).toBe(true);
    expect(instances.every((i) => i.clock.mode === "policy" && i.clock.policy === "miad")).toBe(true);
    for (const [t, d] of result.peakDemandQps.entries()) if (d > 0) expect((plan.routing[FREESH_TYPES[t]! as never] ?? []).length).toBeGreaterThan(0);
    expect(plan.shortfall).toEqual({});
  });

  it("plans a fleet input as the native MILP does for the same partition (energy objective)", () => {
    const config = FreeshPoolPlannerConfig.parse({ kind: "freesh-pool", objective: "energy", respectPowerCaps: false });
    const { plan, stats } = freeshPoolPlanner(config).plan(planningInput(), solver);
    const native = solveFreeshPool(freeshEpisodeInput(data, { episode: 24, objective: "energy" }), solver);
    expect(native.partitionName).toBe("b");
    expect(stats!.objective).toBeCloseTo(native.objective, 6);
    expect(stats!.gap).toBeGreaterThanOrEqual(0);
    const gpus = plan.sites.reduce((n, s) => n + s.instances.reduce((m, i) => m + i.gpus.length, 0), 0);
    expect(gpus).toBe(native.gpusUsed.reduce((n, used) => n + Object.values(used).reduce((a, b) => a + b, 0), 0));
    expect(plan.policy).toBe("freesh");
  });

  it("falls back to energy without emissions, and keeps within power caps when asked", () => {
    const input = planningInput();
    const tight = { ...input, sites: input.sites.map((s) => ({ ...s, powerW: 3000 })) };
    const { plan } = freeshPoolPlanner(FreeshPoolPlannerConfig.parse({ kind: "freesh-pool" })).plan(tight, solver);
    expect(plan.notes.some((n) => n.includes("energy objective used"))).toBe(true);
    expect(Object.keys(plan.shortfall).length).toBeGreaterThan(0);
    const drawn = plan.sites.map((s, n) =>
      s.instances.reduce((w, i) => {
        const gpu = gpuTypeAt(gpuRanges(input.sites[n]!.gpus), i.gpus[0]!);
        const row = input.profile.find((r) => r.gpu === gpu && r.tp === i.tp && r.classId === i.id.split("-")[0]);
        return w + i.replicas * row!.peakPowerW;
      }, 0),
    );
    drawn.forEach((w) => expect(w * 1.82).toBeLessThanOrEqual(3000 + 1e-6));
  });
});
