import { readFile } from "node:fs/promises";
import { Script } from "node:vm";
import { describe, expect, it } from "vitest";

// The dashboard page inlines this browser script as text, so no bundler or type checker reads it;
// this compiles it (no DOM: it is not run) so a syntax error fails here rather than in a browser.
describe("dashboard client script", () => {
  it("compiles as a classic script and keeps the hooks the page documents", async () => {
    const source = await readFile(new URL("../../src/worker/dashboard-client.js", import.meta.url), "utf8");
    expect(() => new Script(source, { filename: "dashboard-client.js" })).not.toThrow();
    for (const hook of ["data-updated-at", "data-site", "power-envelope-w", "power-draw-w", "carbon-g-per-kwh", "gpus", "slo-attainment", "plan-version", "plan-made-at"]) expect(source).toContain(hook);
  });
});
