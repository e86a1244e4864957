import type { MigSlice } from "../../src/core/schemas/mig.ts";
import type { ClockSetting, InstanceRole } from "../../src/core/schemas/plan.ts";

/** A plan instance as the edge sends it (before defaults). */
export interface InstanceInput {
  id: string;
  model?: string;
  tp?: number;
  replicas?: number;
  gpus: number[];
  clock?: ClockSetting;
  role?: InstanceRole;
  loadRps?: Record<string, number>;
  mig?: MigSlice;
}

/** A site plan slice body like `GET /agent/v1/sites/:site/plan` returns. */
export function sliceBody(version: number, site: string, instances: InstanceInput[] | null, routing: Record<string, { site: string; instance: string; weight: number }[]> = {}) {
  return {
    version,
    policy: "greenference",
    createdAtMs: 1_700_000_000_000,
    validUntilMs: 1_700_000_900_000,
    site:
      instances === null
        ? null
        : {
            site,
            powerCapW: 20_000,
            instances: instances.map((i) => ({
              id: i.id,
              model: i.model ?? "llama3.1-8b",
              variant: "base",
              tp: i.tp ?? i.gpus.length / (i.replicas ?? 1),
              replicas: i.replicas ?? 1,
              gpus: i.gpus,
              role: i.role ?? "mixed",
              clock: i.clock ?? { mode: "locked", mhz: 1200 },
              loadRps: i.loadRps ?? {},
              ...(i.mig ? { mig: i.mig } : {}),
            })),
          },
    routing,
  };
}
