import { describe, expect, it } from "vitest";
import { SitePlanSlice } from "./plan-slice.ts";
import { PlanExpiryWatch } from "./plan-expiry.ts";

const T0 = Date.parse("2026-11-28T10:00:00Z");
const slice = (version: number, validUntilMs: number) => SitePlanSlice.parse({ version, policy: "greenference", createdAtMs: validUntilMs - 3_600_000, validUntilMs, site: null });

describe("PlanExpiryWatch", () => {
  it("says once per version that the plan in force has expired, with when the edge last answered", () => {
    const told: string[] = [];
    const watch = new PlanExpiryWatch((m) => told.push(m));
    watch.check(undefined, T0, null);
    watch.check(slice(3, T0), T0, T0 - 1000);
    expect(told).toEqual([]);

    watch.check(slice(3, T0), T0 + 90_000, T0 + 60_000);
    watch.check(slice(3, T0), T0 + 120_000, T0 + 60_000);
    expect(told).toEqual(["plan 3 expired 90 s ago (valid until 2026-11-28T10:00:00.000Z); keeping it, as ending its engines would drop service: the edge last answered a plan pull 30 s ago with no newer plan"]);

    // A newer plan that expires in turn is told again; an edge that never answered says so.
    watch.check(slice(4, T0 + 3_600_000), T0 + 3_605_000, null);
    expect(told[1]).toBe("plan 4 expired 5 s ago (valid until 2026-11-28T11:00:00.000Z); keeping it, as ending its engines would drop service: the edge has not answered a plan pull since the agent started");
    expect(told).toHaveLength(2);
  });
});
