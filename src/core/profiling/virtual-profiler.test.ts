import { describe, expect, it } from "vitest";
import { gpuSpecs } from "../model/gpu-specs.ts";
import { llmSpecs } from "../model/llm-specs.ts";
import { ProfileTable } from "../schemas/profile.ts";
import { classLengthsFromScheme, DYNAMOLLM_CLASS_LENGTHS } from "./class-lengths.ts";
import { classify, schemeFromPercentiles } from "../workload/class-scheme.ts";
import { seededRng } from "../ports/rng.ts";
import { sampleLengths } from "./class-lengths.ts";
import { interpolateAtLoad, rowsOf } from "./profile-lookup.ts";
import { defaultClocks, virtualProfile } from "./virtual-profiler.ts";

const gpu = gpuSpecs["A100-80GB"];
const options = {
  llm: llmSpecs["llama3.1-8b"],
  gpu,
  tps: [1, 2],
  clocksMhz: [1005, 1410],
  classes: DYNAMOLLM_CLASS_LENGTHS.filter((c) => c.classId === "SM" || c.classId === "LS"),
  loadFractions: [0.05, 0.2, 0.4],
  requestsPerPoint: 80,
  seed: 3,
};

describe("virtualProfile", () => {
  const table = virtualProfile(options);

  it("has one valid row per (TP, clock, class, load)", () => {
    expect(table.rows.length).toBe(2 * 2 * 2 * 3);
    expect(() => ProfileTable.parse(table)).not.toThrow();
    expect(table.source.details["simulated"]).toBe(true);
  });

  it("uses the same absolute loads at every clock of a (TP, class)", () => {
    const loads = (mhz: number) => rowsOf(table.rows, { tp: 1, classId: "SM" as never, mhz }).map((r) => r.loadRps);
    expect(loads(1005)).toEqual(loads(1410));
  });

  it("shows the expected trade-offs: higher load costs latency, saves energy per request; higher clock costs power", () => {
    const at = (mhz: number) => rowsOf(table.rows, { tp: 1, classId: "SM" as never, mhz }).sort((a, b) => a.loadRps - b.loadRps);
    const fast = at(1410);
    expect(fast[2]!.e2eMs.p50).toBeGreaterThan(fast[0]!.e2eMs.p50);
    expect(fast[2]!.energyPerRequestJ).toBeLessThan(fast[0]!.energyPerRequestJ);
    expect(fast[1]!.avgPowerW).toBeGreaterThan(at(1005)[1]!.avgPowerW);
    expect(fast[1]!.tbtMs.p50).toBeLessThan(at(1005)[1]!.tbtMs.p50);
  });

  it("measures the observed lengths of a class where given: LS prompts all at the top of its range take longer to a first token than the range drawn log-uniformly", () => {
    // Trace requests, arrival times and all: only their lengths are taken.
    const longest = Array.from({ length: 50 }, (_, i) => ({ arrivalS: 86_400 + i, inputTokens: 4000, outputTokens: 60 }));
    const observed = virtualProfile({ ...options, observed: { LS: longest } });
    const ttft = (rows: typeof table.rows) => rowsOf(rows, { tp: 1, classId: "LS" as never, mhz: 1410 }).map((r) => r.ttftMs.p50);
    const drawn = ttft(table.rows);
    ttft(observed.rows).forEach((ms, i) => {
      expect(ms).toBeGreaterThan(drawn[i]!);
      expect(ms).toBeLessThan(5 * drawn[i]!);
    });
    // Capacity comes from the observed mean: fewer of the longer requests per second.
    expect(rowsOf(observed.rows, { tp: 1, classId: "LS" as never, mhz: 1410 })[0]!.loadRps).toBeLessThan(rowsOf(table.rows, { tp: 1, classId: "LS" as never, mhz: 1410 })[0]!.loadRps);
    // A class with no observed lengths keeps its ranges.
    expect(rowsOf(observed.rows, { classId: "SM" as never })).toEqual(rowsOf(table.rows, { classId: "SM" as never }));
  });

  it("runs each point for its requests' lifetimes where asked: near capacity, a short run of long answers looks as if it kept up, a long one shows the queue", () => {
    const near = { ...options, tps: [1], clocksMhz: [1005], classes: DYNAMOLLM_CLASS_LENGTHS.filter((c) => c.classId === "LL"), loadFractions: [0.9], requestsPerPoint: 20 };
    const [short] = virtualProfile(near).rows;
    const [long] = virtualProfile({ ...near, lifetimes: 20 }).rows;
    expect(long!.loadRps).toBe(short!.loadRps);
    expect(long!.tbtMs.p99).toBeGreaterThan(1.5 * short!.tbtMs.p99);
    expect(long!.e2eMs.p50).toBeGreaterThan(1.5 * short!.e2eMs.p50);
    expect(virtualProfile({ ...near, lifetimes: 20 }).source.details["lifetimes"]).toBe(20);
  });

  it("is reproducible from its seed and changes with another", () => {
    expect(virtualProfile(options).rows).toEqual(table.rows);
    expect(virtualProfile({ ...options, seed: 4 }).rows[0]!.e2eMs).not.toEqual(table.rows[0]!.e2eMs);
  });

  it("interpolates between load points and clamps outside them", () => {
    const points = rowsOf(table.rows, { tp: 2, classId: "LS" as never, mhz: 1410 });
    const [a, b] = points.sort((x, y) => x.loadRps - y.loadRps);
    const mid = interpolateAtLoad(points, (a!.loadRps + b!.loadRps) / 2);
    expect(mid.clamped).toBe(false);
    expect(mid.avgPowerW).toBeCloseTo((a!.avgPowerW + b!.avgPowerW) / 2, 9);
    expect(mid.ttftMs.mean).toBeCloseTo((a!.ttftMs.mean! + b!.ttftMs.mean!) / 2, 9);
    expect(interpolateAtLoad(points, a!.loadRps / 10)).toMatchObject({ clamped: true, avgPowerW: a!.avgPowerW });
  });
});

describe("defaultClocks", () => {
  it("spans 800 MHz to max in 7 supported steps", () => {
    const clocks = defaultClocks(gpuSpecs["H100-80GB"]);
    expect(clocks.length).toBe(7);
    expect(clocks[0]).toBe(810);
    expect(clocks[6]).toBe(1980);
    expect(clocks.every((c) => c % 15 === 0)).toBe(true);
    expect(defaultClocks(gpu)[6]).toBe(1410);
  });
});

describe("classLengthsFromScheme", () => {
  it("gives each class of a scheme a range whose samples classify back into that class", () => {
    const rng = seededRng(9);
    const workload = Array.from({ length: 500 }, () => ({ inputTokens: 1 + Math.floor(rng.next() * 3000), outputTokens: 1 + Math.floor(rng.next() * 600) }));
    const scheme = schemeFromPercentiles(workload);
    const classes = classLengthsFromScheme(scheme, workload);
    expect(classes.map((c) => c.classId)).toEqual(["SS", "SM", "SL", "MS", "MM", "ML", "LS", "LM", "LL"]);
    for (const c of classes) {
      for (let i = 0; i < 50; i++) {
        const l = sampleLengths(rng, c, 1_000_000);
        expect(classify(scheme, l.inputTokens, l.outputTokens)).toBe(c.classId);
      }
    }
  });
});

describe("metricAtLoad", () => {
  it("agrees with interpolateAtLoad on sorted points", async () => {
    const { metricAtLoad } = await import("./profile-lookup.ts");
    const table = virtualProfile({ ...options, tps: [1], clocksMhz: [1410], loadFractions: [0.05, 0.2, 0.4] });
    const points = rowsOf(table.rows, { classId: "SM" as never }).sort((a, b) => a.loadRps - b.loadRps);
    for (const load of [0, points[0]!.loadRps * 1.5, points[1]!.loadRps * 1.2, 1e6]) {
      expect(metricAtLoad(points, load, (r) => r.avgPowerW)).toBeCloseTo(interpolateAtLoad(points, load).avgPowerW, 9);
    }
  });
});
