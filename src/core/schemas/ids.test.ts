import { describe, expect, it } from "vitest";
import { ClassId, InstanceId, ModelId, SiteId, VariantId } from "./ids.ts";

describe("ids", () => {
  it("refuses the names of built-in object members, which would read an object's prototype as a key", () => {
    for (const schema of [ClassId, InstanceId, ModelId, SiteId, VariantId]) {
      for (const name of ["constructor", "toString", "__proto__", "hasOwnProperty", "valueOf"]) expect(schema.safeParse(name).success).toBe(false);
    }
    expect(ClassId.safeParse("SS").success).toBe(true);
    expect(InstanceId.safeParse("llama-constructor").success).toBe(true);
  });
});
