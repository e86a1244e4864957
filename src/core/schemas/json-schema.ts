import { z } from "zod";
import { Fleet } from "./fleet.ts";
import { Forecast } from "./forecast.ts";
import { Plan, PlanDelta } from "./plan.ts";
import { ProfileTable } from "./profile.ts";
import { Telemetry } from "./telemetry.ts";

/** The contracts other programs exchange with Greenference, by name. */
export const CONTRACTS = { Fleet, Plan, PlanDelta, Telemetry, Forecast, ProfileTable } as const;
export type ContractName = keyof typeof CONTRACTS;

/**
 * JSON Schema (draft 2020-12) of a contract as a sender writes it: fields with defaults are optional.
 * Cross-field rules (unique ids, references, sums) are not expressible there and are checked only by
 * the zod schema.
 *
 * @example
 * JSON.stringify(contractJsonSchema("Telemetry")); // publish for host-agent authors
 */
export function contractJsonSchema(name: ContractName): z.core.JSONSchema.JSONSchema {
  return z.toJSONSchema(CONTRACTS[name], { io: "input" });
}
