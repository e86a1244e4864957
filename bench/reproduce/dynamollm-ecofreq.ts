import { INSTANCE_EPOCH_S, instanceManagerMixClock } from "../../src/core/planning/dynamollm/instance-manager.ts";
import { mixedLoad, type MixPart } from "../../src/core/planning/dynamollm/mixed-load.ts";
import { rowsOf } from "../../src/core/profiling/profile-lookup.ts";
import type { ClassId } from "../../src/core/schemas/ids.ts";
import type { PlanDelta } from "../../src/core/schemas/plan.ts";
import type { ProfileRow } from "../../src/core/schemas/profile.ts";
import type { FleetCorrector } from "../../src/core/sim/fleet/fleet-types.ts";

/**
 * The combined policy's site loop in the flow-level fleet simulator: every 5 s (the epoch of
 * DynamoLLM's instance managers, so both systems' local loops run equally often), each instance
 * the plan gave EcoFreq bounds runs at the least-power clock within those bounds that meets the
 * SLO of every class it serves (its own and those spilled onto it) at their loads of the moment (the plan's load scaled per class to the demand now)
 * and when the instance is full (`ecoFreqEpochClock`), as EcoFreq lowers the clock when the SLO
 * has slack and runs the top clock while requests wait (GreenServe §V-C, Alg. 1). Without this the
 * simulator runs a clock policy at its upper bound, the planned clock for the 5-minute peak. The
 * bounds are the plan's, remembered per plan version: the corrector only moves the upper one it
 * hands out.
 *
 * @example
 * simulateFleet({ ...config, corrector: ecoFreqCorrector({ profile, model: "llama2-70b" }) });
 */
export function ecoFreqCorrector(o: { profile: readonly ProfileRow[]; model: string; variant?: string }): FleetCorrector {
  let planned: { version: number; bounds: Map<string, { minMhz: number; maxMhz: number }> } | undefined;
  return {
    name: "ecofreq within planned bounds",
    cadenceS: INSTANCE_EPOCH_S,
    correct(ctx) {
      const plan = ctx.current;
      if (planned?.version !== plan.version) {
        const bounds = new Map<string, { minMhz: number; maxMhz: number }>();
        for (const s of plan.sites) for (const e of s.instances) if (e.clock.mode === "policy" && e.clock.policy === "ecofreq") bounds.set(`${s.site}/${e.id}`, { minMhz: e.clock.minMhz, maxMhz: e.clock.maxMhz });
        planned = { version: plan.version, bounds };
      }
      const routed = new Map<string, number>();
      for (const [c, targets] of Object.entries(plan.routing)) routed.set(c, (targets ?? []).reduce((s, t) => s + t.weight, 0));
      const clocks: PlanDelta["clocks"] = [];
      for (const s of plan.sites) {
        const gpu = ctx.sites.find((x) => x.id === s.site)?.gpu.type;
        for (const e of s.instances) {
          const bounds = planned.bounds.get(`${s.site}/${e.id}`);
          if (!bounds || !gpu || e.clock.mode !== "policy") continue;
          // Every class the instance serves (its own and those spilled onto it), each on its own
          // curve and against its own SLO, at its load of the moment (DynamoLLM's mixed pools).
          const parts: MixPart[] = [];
          for (const [c, rps] of Object.entries(e.loadRps) as [ClassId, number][]) {
            const rows = rowsOf(o.profile, { model: o.model, variant: o.variant ?? "base", gpu, tp: e.tp, classId: c });
            const slo = ctx.slo[c];
            const now = (rps * (ctx.demandRps[c] ?? 0)) / Math.max(1e-12, routed.get(c) ?? 0);
            if (rows.length > 0 && slo && now > 0) parts.push({ rows, loadRps: now / e.replicas, slo });
          }
          if (parts.length === 0) continue;
          const mhz = ecoFreqEpochClock(parts, bounds);
          if (mhz !== e.clock.maxMhz) clocks.push({ site: s.site, instance: e.id, clock: { mode: "policy", policy: "ecofreq", minMhz: bounds.minMhz, maxMhz: mhz } });
        }
      }
      return clocks.length > 0 ? { baseVersion: plan.version, createdAtMs: Math.round(ctx.nowS * 1000), clocks, routing: {} } : undefined;
    },
  };
}

/**
 * EcoFreq's clock for one instance for a 5-s epoch: the least-power clock within `bounds` at which
 * every class of `parts` meets its SLO at its load of the moment and also with the instance full
 * (the same mix scaled to utilisation 1), else the top of the bounds. Alg. 1's queue check runs
 * max(F) whenever requests wait, because a clock that suits the running requests can leave the
 * waiting ones to miss their SLOs. In the fleet simulator requests wait exactly when an instance
 * is full, which per-second arrivals bring about often on instances that serve a few req/s; a
 * controller that decides once per epoch cannot switch for those seconds, so the clock it keeps
 * must meet the SLO there too.
 *
 * @example
 * ecoFreqEpochClock([{ rows: llAtTp4, loadRps: 0.33, slo: sloLL }], { minMhz: 810, maxMhz: 1395 }); // 990: 810 MHz misses TBT when full
 */
export function ecoFreqEpochClock(parts: readonly MixPart[], bounds: { minMhz: number; maxMhz: number }): number {
  const u = mixedLoad(parts).utilisation;
  const toFull = u > 0 && u < 1 ? 1 / u : 1;
  const full = instanceManagerMixClock(parts.map((p) => ({ ...p, loadRps: p.loadRps * toFull })), bounds);
  if (!full.meetsSlo) return bounds.maxMhz;
  return instanceManagerMixClock(parts, { minMhz: full.mhz, maxMhz: bounds.maxMhz }).mhz;
}
