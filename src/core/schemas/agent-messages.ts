import { z } from "zod";
import { EpochMs, GpuType, InstanceId } from "./ids.ts";
import { InstanceState } from "./telemetry.ts";

/** What a host agent says about itself when it starts (`POST /agent/v1/sites/:site/register`). */
export const AgentRegistration = z.object({
  agentVersion: z.string().min(1).max(64),
  hostname: z.string().min(1).max(253).optional(),
  /** Engine kinds it can drive, e.g. "vllm", "sglang", "simulated". */
  engines: z.array(z.string().min(1).max(32)).max(16).default([]),
  gpus: z.array(z.object({ index: z.number().int().nonnegative(), type: GpuType })).default([]),
});
export type AgentRegistration = z.infer<typeof AgentRegistration>;

/**
 * The outcome of applying a plan (`POST /agent/v1/sites/:site/applied`): which version, whether it
 * fully succeeded, and each instance's state and clock afterwards.
 */
export const AppliedReport = z.object({
  planVersion: z.number().int().nonnegative(),
  appliedAtMs: EpochMs,
  ok: z.boolean(),
  message: z.string().max(2000).optional(),
  instances: z
    .array(z.object({ id: InstanceId, state: InstanceState, clockMhz: z.number().positive().nullable().optional() }))
    .default([]),
});
export type AppliedReport = z.infer<typeof AppliedReport>;
