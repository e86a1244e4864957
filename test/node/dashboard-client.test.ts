import { readFile } from "node:fs/promises";
import { Script } from "node:vm";
import { describe, expect, it } from "vitest";

const source = (name: string) => readFile(new URL(`../../src/worker/${name}`, import.meta.url), "utf8");

// The dashboard page inlines these browser scripts as text, so no bundler or type checker reads them;
// this compiles them (no DOM: they are not run) so a syntax error fails here rather than in a browser.
describe("dashboard client scripts", () => {
  it("compile as classic scripts, and the client keeps the hooks the page documents", async () => {
    for (const name of ["dashboard-charts.js", "dashboard-client.js", "dashboard-key-table.js"]) {
      const text = await source(name);
      expect(() => new Script(text, { filename: name })).not.toThrow();
    }
    const client = await source("dashboard-client.js");
    const keys = await source("dashboard-key-table.js");
    for (const hook of ["data-key", "key-budget-g", "key-spent-g", "key-pace", "key-state", "key-today-g", "key-note"]) expect(keys).toContain(hook);
    for (const hook of ["data-updated-at", "data-site", "power-envelope-w", "power-draw-w", "power-capacity-w", "plan-cap-w", "data-power-scale-w", "carbon-g-per-kwh", "gpus", "slo-attainment", "fleet-slo-label", "plan-version", "plan-made-at"]) expect(client).toContain(hook);
  });

  it("give every series kind and every site its own colour", async () => {
    const page: { window: { DashboardCharts?: { SERIES: Record<string, string>; siteColor(i: number): string } } } = { window: {} };
    new Script(await source("dashboard-charts.js")).runInNewContext(page);
    const api = page.window.DashboardCharts!;
    const series = Object.values(api.SERIES);
    const sites = Array.from({ length: 8 }, (_, i) => api.siteColor(i));
    expect(new Set([...series, ...sites]).size).toBe(series.length + sites.length);
  });
});
