import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { sliceBody } from "../applier/plan-fixtures.test-helper.ts";
import { SitePlanSlice } from "../protocol/plan-slice.ts";
import { PlanStore } from "./plan-store.ts";

const root = mkdtempSync(join(tmpdir(), "plan-store-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const slice = SitePlanSlice.parse(sliceBody(7, "wind-a", [{ id: "llama", gpus: [0] }]));

describe("PlanStore", () => {
  it("gives back the plan it kept, with where it came from", () => {
    const logged: string[] = [];
    const store = new PlanStore(join(root, "plan.json"), (m) => logged.push(m));
    expect(store.load()).toBeUndefined();
    store.save(slice, "edge");
    expect(store.load()).toEqual({ source: "edge", savedAtMs: expect.any(Number), slice });
    expect(readdirSync(root)).toEqual(["plan.json"]);
    expect(logged).toEqual([]);
  });

  it("ignores a file its schema refuses, or that is not JSON, saying why", () => {
    const logged: string[] = [];
    const path = join(root, "bad.json");
    const store = new PlanStore(path, (m) => logged.push(m));
    writeFileSync(path, JSON.stringify({ source: "edge", savedAtMs: 1, slice: { ...slice, version: -1 } }));
    expect(store.load()).toBeUndefined();
    writeFileSync(path, "{ half a plan");
    expect(store.load()).toBeUndefined();
    expect(logged).toEqual([expect.stringMatching(new RegExp(`^ignoring the plan kept in ${path}: .*slice\\.version`, "s")), expect.stringMatching(`^ignoring the plan kept in ${path}: .*JSON`)]);
  });

  it("logs a plan it cannot write rather than throwing", () => {
    const logged: string[] = [];
    new PlanStore(join(root, "gone", "plan.json"), (m) => logged.push(m)).save(slice, "local");
    expect(logged).toEqual([expect.stringMatching(/^could not keep plan 7 in .*gone\/plan.json for a restart without the edge: ENOENT/)]);
  });
});
