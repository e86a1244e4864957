import { env } from "cloudflare:test";
import example from "../../docs/fleets/example.json";
import { controlStub } from "../../durable-objects/control-do.ts";
import { gpuSpecs } from "../../src/core/model/gpu-specs.ts";
import { variantLlmSpec } from "../../src/core/model/llm-specs.ts";
import { contractFleet } from "../../src/core/policies/policy-contract.test-helper.ts";
import { POLICIES } from "../../src/core/policies/registry.ts";
import { DYNAMOLLM_CLASS_LENGTHS } from "../../src/core/profiling/class-lengths.ts";
import { defaultClocks, virtualProfile } from "../../src/core/profiling/virtual-profiler.ts";
import type { Fleet } from "../../src/core/schemas/fleet.ts";

// A fleet one policy plans and another cannot, for the tests of changes that are planned at once and undone when they cannot plan.

/** The example fleet's own model, Llama-2-70B (138 GB of weights): heron plans it on 2 or 4 GPUs an instance, Clover's one-GPU services cannot hold it. */
export function fleet70b(): Fleet {
  const fleet = contractFleet(example, POLICIES.heron);
  return { ...fleet, models: example.models as Fleet["models"], variants: example.variants as Fleet["variants"] };
}

/** A small virtual profile of Llama-2-70B at TP 2 and 4 on the fleet's GPU types. */
export function profile70b(fleet: Fleet) {
  const types = [...new Set(fleet.sites.flatMap((s) => s.gpus.map((g) => g.type)))];
  const rows = types.flatMap((type) => {
    const gpu = gpuSpecs[type];
    const made = virtualProfile({ llm: variantLlmSpec("llama2-70b", "base"), gpu, tps: [2, 4], clocksMhz: defaultClocks(gpu, 3), classes: DYNAMOLLM_CLASS_LENGTHS, loadFractions: [0.15, 0.4], requestsPerPoint: 8, seed: 1 });
    return made.rows.map((r) => ({ ...r, model: "llama2-70b", variant: "base" }));
  });
  return { version: 1, source: { kind: "virtual", details: { simulated: true, purpose: "policy switch" } }, rows };
}

/** The fleet revision in the routing snapshot's plan key (`revision:plan.version.revision`); NaN while there is no fleet. */
export async function fleetRevision(): Promise<number> {
  const reply = await controlStub(env).routingSnapshot();
  return reply.changed ? Number(reply.snapshot.routing?.planKey.split(":")[0]) : NaN;
}
