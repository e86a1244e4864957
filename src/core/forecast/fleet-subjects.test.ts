import { describe, expect, it } from "vitest";
import { fixtureFleet } from "../routing/routing.test-helper.ts";
import { Forecast, type ForecastSubject } from "../schemas/forecast.ts";
import { fleetSubjectIndex, subjectOutsideFleet } from "./fleet-subjects.ts";

const about = (subject: { kind: ForecastSubject["kind"]; id: string }): Forecast => {
  const kind = subject.kind === "class" ? "load" : "carbon_average";
  return Forecast.parse({ kind, unit: kind === "load" ? "req/s" : "gCO2/kWh", source: "t", issuedAtMs: 0, subject, points: [{ tMs: 0, value: 1 }] });
};

describe("subjectOutsideFleet", () => {
  const fleet = fixtureFleet();
  const site = fleet.sites[0]!.id as string;
  const cls = fleet.classes[0]!.id as string;

  it("passes the fleet's sites and classes, and any region", () => {
    expect(subjectOutsideFleet([about({ kind: "site", id: site }), about({ kind: "class", id: cls }), about({ kind: "region", id: "nowhere" })], fleet)).toBeNull();
  });

  it("names the first site or class the fleet lacks, with the fleet's own", () => {
    const typo = subjectOutsideFleet([about({ kind: "site", id: site }), about({ kind: "site", id: `${site}x` })], fleet);
    expect(typo).toEqual({ index: 1, message: `site "${site}x" is not in the fleet, whose sites are ${fleet.sites.map((s) => s.id).join(", ")}` });
    expect(subjectOutsideFleet([about({ kind: "class", id: "ZZ" })], fleet)?.message).toMatch(/^class "ZZ" is not one of the fleet's classes, /);
  });

  it("lists at most eight of the fleet's ids", () => {
    const many = { ...fleet, sites: Array.from({ length: 12 }, (_, i) => ({ ...fleet.sites[0]!, id: `s${i}` as never })) };
    expect(subjectOutsideFleet([about({ kind: "site", id: "t" })], many)?.message).toBe('site "t" is not in the fleet, whose sites are s0, s1, s2, s3, s4, s5, s6, s7 and 4 more');
  });

  it("finds the first forecast that needs a fleet to check it", () => {
    expect(fleetSubjectIndex([about({ kind: "region", id: "DE" }), about({ kind: "class", id: "AA" })])).toBe(1);
    expect(fleetSubjectIndex([about({ kind: "region", id: "DE" })])).toBe(-1);
  });
});
