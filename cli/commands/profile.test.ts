import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ProfileTable } from "../../src/core/schemas/profile.ts";
import { runCli } from "../run-command.test-helper.ts";

describe("greenference profile --virtual", () => {
  it("writes a valid profile table and reports its shape", async () => {
    const out = mkdtempSync(join(tmpdir(), "gf-profile-"));
    const r = await runCli(["profile", "--virtual", "--model", "llama3.1-8b", "--gpu", "a100", "--tp", "1", "--loads", "0.1,0.3", "--requests", "40", "--out", out, "--json"]);
    expect(r.code).toBe(0);
    const j = r.last();
    expect(j).toMatchObject({ rows: 1 * 7 * 9 * 2, classes: 9, tps: [1], loads: 2, simulated: true });
    expect(j.clocks).toHaveLength(7);
    const table = ProfileTable.parse(JSON.parse(readFileSync(j.file, "utf8")));
    expect(table.rows).toHaveLength(j.rows);
    expect(table.source.kind).toBe("virtual");
  });

  it("profiles a trace's own classes with --trace", async () => {
    const out = mkdtempSync(join(tmpdir(), "gf-profile-"));
    const trace = join(out, "trace.csv");
    const rows = Array.from({ length: 30 }, (_, i) => `2023-11-16 18:15:${String(10 + i).padStart(2, "0")}.0000000,${100 + 37 * i},${10 + 11 * i}`);
    writeFileSync(trace, ["TIMESTAMP,ContextTokens,GeneratedTokens", ...rows].join("\n"));
    const r = await runCli(["profile", "--virtual", "--model", "llama3.1-8b", "--gpu", "a100", "--tp", "1", "--loads", "0.2", "--requests", "20", "--trace", trace, "--out", out, "--json"]);
    expect(r.code).toBe(0);
    const table = ProfileTable.parse(JSON.parse(readFileSync(r.last().file, "utf8")));
    const ss = (table.source.details["classes"] as { classId: string; input: { max: number } }[]).find((c) => c.classId === "SS")!;
    expect(ss.input.max).toBeLessThan(1000);
  });

  it("profiles a chunked-prefill engine with --scheduling chunked: the same grid, other latencies", async () => {
    const out = mkdtempSync(join(tmpdir(), "gf-profile-"));
    const args = ["profile", "--virtual", "--model", "llama2-70b", "--gpu", "h100", "--tp", "4", "--loads", "0.4", "--requests", "60", "--out", out, "--json"];
    const first = await runCli(args);
    const whole = ProfileTable.parse(JSON.parse(readFileSync(first.last().file, "utf8")));
    const r = await runCli([...args, "--scheduling", "chunked"]);
    expect(r.code).toBe(0);
    expect(r.last()).toMatchObject({ scheduling: "chunked", rows: whole.rows.length });
    const chunked = ProfileTable.parse(JSON.parse(readFileSync(r.last().file, "utf8")));
    expect(chunked.source.details["scheduling"]).toBe("chunked");
    expect(chunked.rows.map((x) => x.tbtMs.p50)).not.toEqual(whole.rows.map((x) => x.tbtMs.p50));
    const bad = await runCli([...args, "--scheduling", "sarathi"]);
    expect(bad.code).toBe(1);
    expect(bad.err.join("\n")).toContain("--scheduling takes prefill-first or chunked, got 'sarathi'");
  });

  it("rejects an unknown model and a non-virtual run with a clear message", async () => {
    const bad = await runCli(["profile", "--virtual", "--model", "gpt-9", "--gpu", "h100", "--out", tmpdir()]);
    expect(bad.code).toBe(1);
    expect(bad.err.join("\n")).toMatch(/unknown model 'gpt-9'; known: llama2-70b/);
    const real = await runCli(["profile", "--model", "llama2-70b", "--gpu", "h100", "--out", tmpdir()]);
    expect(real.code).toBe(1);
    expect(real.err.join("\n")).toContain("only --virtual");
  });

  it("refuses TPs the model's weights do not fit (it wrote an empty table), and names those it leaves out", async () => {
    const none = await runCli(["profile", "--virtual", "--model", "llama2-70b", "--gpu", "h100", "--tp", "1", "--loads", "0.5", "--requests", "10", "--out", mkdtempSync(join(tmpdir(), "gf-profile-"))]);
    expect(none.code).toBe(1);
    expect(none.err.join("\n")).toMatch(/--tp 1: llama2-70b's weights fit on no such number of H100-80GB GPUs/);
    const some = await runCli(["profile", "--virtual", "--model", "llama2-70b", "--gpu", "h100", "--tp", "1,2", "--loads", "0.5", "--requests", "10", "--out", mkdtempSync(join(tmpdir(), "gf-profile-")), "--json"]);
    expect(some.code).toBe(0);
    expect(some.err.join("\n")).toMatch(/--tp 1 left out: llama2-70b's weights do not fit/);
    expect(some.last().tps).toEqual([2]);
  });

  it("says what the system refused for an output path that is a file, with no stack trace", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "gf-profile-")), "a-file");
    writeFileSync(file, "");
    const r = await runCli(["profile", "--virtual", "--model", "llama3.1-8b", "--gpu", "a100", "--tp", "1", "--loads", "0.5", "--requests", "10", "--out", file]);
    expect(r.code).toBe(1);
    expect(r.err).toEqual([`greenference profile: cannot create ${file}: it exists and is not a directory`]);
  });

  it("takes no arguments besides its flags", async () => {
    const r = await runCli(["profile", "--virtual", "extra"]);
    expect(r.code).toBe(1);
    expect(r.err.join("\n")).toMatch(/unexpected argument 'extra'/);
  });
});
