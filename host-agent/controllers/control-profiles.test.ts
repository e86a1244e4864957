import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { gpuSpec } from "../../src/core/model/gpu-specs.ts";
import { llmSpec } from "../../src/core/model/llm-specs.ts";
import { ControlProfiles, loadProfileTable, profileClocks } from "./control-profiles.ts";

const dir = mkdtempSync(join(tmpdir(), "control-profiles-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const llm = llmSpec("llama3.1-8b");
const h100 = gpuSpec("H100-80GB");
const BOUNDS = { minMhz: 1000, maxMhz: 1600 };

describe("ControlProfiles", () => {
  it("profiles the instance virtually at 5 grid clocks within its bounds, once per key", async () => {
    expect(profileClocks(h100, BOUNDS)).toEqual([1005, 1155, 1305, 1455, 1590]);
    const profiles = new ControlProfiles();
    const rows = await profiles.rowsFor(llm, h100, 1, "SM", BOUNDS);
    expect(new Set(rows.map((r) => r.mhz))).toEqual(new Set([1005, 1155, 1305, 1455, 1590]));
    expect(rows.every((r) => r.classId === "SM" && r.tp === 1 && r.model === "llama3.1-8b")).toBe(true);
    expect(rows).toHaveLength(50);
    expect(await profiles.rowsFor(llm, h100, 1, "SM", BOUNDS)).toBe(rows);
  });

  it("reads a profile table file for the instance's model, GPU and TP, and names a bad file", async () => {
    const rows = (await new ControlProfiles().rowsFor(llm, h100, 1, "MM", BOUNDS)).slice(0, 10);
    const good = join(dir, "good.json");
    writeFileSync(good, JSON.stringify({ version: 1, source: { kind: "measured", details: {} }, rows }));
    const fromFile = new ControlProfiles(loadProfileTable(good));
    expect(await fromFile.rowsFor(llm, h100, 1, "MM", BOUNDS)).toEqual(rows);
    await expect(fromFile.rowsFor(llm, h100, 2, "MM", BOUNDS)).rejects.toThrow(/no rows for llama3.1-8b on 2 x H100-80GB/);
    const bad = join(dir, "bad.json");
    writeFileSync(bad, JSON.stringify({ version: 1, source: { kind: "measured", details: {} }, rows: [{ ...rows[0], tp: 0 }] }));
    expect(() => loadProfileTable(bad)).toThrow(new RegExp(`${bad}.*not valid[\\s\\S]*tp`));
    expect(() => loadProfileTable(join(dir, "missing.json"))).toThrow(/cannot read the profile table/);
  });
});
