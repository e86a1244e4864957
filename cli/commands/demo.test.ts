import { describe, expect, it } from "vitest";
import { runCli } from "../run-command.test-helper.ts";

describe("greenference demo", () => {
  it("finds, per class, a configuration at most as costly as TP8 at max clock", async () => {
    const r = await runCli(["demo", "--model", "llama3.1-8b", "--gpu", "a100", "--tokens-per-second", "1500"]);
    expect(r.code).toBe(0);
    expect(r.out[0]).toContain("simulated");
    const j = r.last();
    expect(j.classes).toHaveLength(9);
    for (const c of j.classes) {
      if (c.best && c.baseline.meetsSlo) expect(c.best.energyPerRequestJ).toBeLessThanOrEqual(c.baseline.energyPerRequestJ);
    }
  });
});
