import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { parseFreeshProfiles } from "./freesh-profiles.ts";
import { parseFreeshDemand, parseFreeshEmissions } from "./freesh-series.ts";
import { FREESH_PARTITIONS } from "../workload/freesh-partition.ts";

const read = (name: string) => readFileSync(resolve(process.cwd(), "data/freesh", name), "utf8");

describe("FREESH files", () => {
  it("reads 288 five-minute emission rates for 3 sites, negatives included", () => {
    const e = parseFreeshEmissions(read("e_instance.csv"), "e_instance.csv");
    expect(e.siteNames).toEqual(["Data center A", "Data center B", "location 3"]);
    expect(e.bySite.map((s) => s.length)).toEqual([288, 288, 288]);
    expect(e.bySite[0]![0]).toBe(2500.760436);
    expect(e.bySite.flat().some((x) => x < 0)).toBe(true);
  });

  it.each(["a", "b"] as const)("reads 288 rows of per-type QPS for partition %s", (p) => {
    const d = parseFreeshDemand(read(`base_throughput_${p}.csv`), `base_throughput_${p}.csv`);
    expect(d.rows).toHaveLength(288);
    expect(Object.keys(d.rows[0]!)).toEqual(["ss", "sl", "ls", "ll"]);
  });

  it("reads profiles.json whose thresholds match FREESH's Table 4", () => {
    const p = parseFreeshProfiles(read("profiles.json"), "profiles.json");
    expect(p.modes.map((m) => m.name)).toEqual(["A100x2", "A100x4", "A100x8", "H100x4"]);
    expect(p.sites_gpus).toHaveLength(3);
    for (const name of ["a", "b"] as const) expect(p.partitions[name].thresholds_tokens).toEqual(FREESH_PARTITIONS[name]);
    expect(p.partitions.a.demand_file).toBe("base_throughput_a.csv");
  });

  it("names the path of a value that does not match, and unknown keys", () => {
    const json = JSON.parse(read("profiles.json"));
    json.partitions.b.power_w[2] = [1, 2, 3];
    expect(() => parseFreeshProfiles(JSON.stringify(json), "profiles.json")).toThrow(/^profiles\.json: field partitions\.b\.power_w\.2: /);
    expect(() => parseFreeshProfiles(JSON.stringify({ ...JSON.parse(read("profiles.json")), extra: 1 }), "p.json")).toThrow(/p\.json: field \(root\): .*extra/);
    expect(() => parseFreeshProfiles("{", "p.json")).toThrow(/p\.json: not valid JSON/);
  });

  it("rejects a series that is not one day, and a negative QPS with its line", () => {
    expect(() => parseFreeshDemand("ss,sl,ls,ll\n1,2,3,4\n", "d.csv")).toThrow("d.csv: expected 288 rows (one day of 5-minute slots), got 1");
    expect(() => parseFreeshDemand("ss,sl,ls,ll\n1,2,3,4\n1,-2,3,4\n", "d.csv")).toThrow('d.csv line 3: field sl: expected a non-negative number, got "-2"');
  });
});
