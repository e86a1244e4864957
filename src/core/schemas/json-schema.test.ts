import { describe, expect, it } from "vitest";
import { CONTRACTS, contractJsonSchema, type ContractName } from "./json-schema.ts";

describe("contractJsonSchema", () => {
  it("publishes every contract as an object schema", () => {
    for (const name of Object.keys(CONTRACTS) as ContractName[]) {
      const schema = contractJsonSchema(name);
      expect(schema.type, name).toBe("object");
      expect(schema.$schema, name).toContain("2020-12");
    }
  });

  it("describes input: fields with defaults are optional, discriminated unions keep their tags", () => {
    const telemetry = contractJsonSchema("Telemetry");
    expect(telemetry.required).toContain("sentAtMs");
    expect(telemetry.required).not.toContain("pendingReconfigurations");
    expect(JSON.stringify(contractJsonSchema("Fleet"))).toContain('"const":"uk-carbon-intensity"');
  });
});
