import { mkdir } from "node:fs/promises";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LocalStack } from "../../lib/stack/local-stack.ts";
import { DashboardState } from "../../src/core/dashboard/dashboard-state.ts";
import { startTestStack } from "./stack.test-helper.ts";

/** Debian's chromium (`.ci/run` installs it with apt-get); CHROMIUM_PATH overrides. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
/** Where the screenshot goes (the test output folder). */
const ARTIFACTS = join(process.cwd(), "out", "test-artifacts");
/** The datasheet TDP of the stack's H100s and Heron's server overhead: what a site can draw at most. */
const H100_TDP_W = 700;
const SERVER_OVERHEAD = 1.82;

let stack: LocalStack;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`no chromium at ${CHROMIUM}: install Debian's package (apt-get install chromium) or set CHROMIUM_PATH`);
  stack = await startTestStack({}, { autopilot: true });
  // Flags for a root, offline sandbox: no sandbox, no GPU, no background calls to Google's hosts.
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  page = await browser.newPage({ viewport: { width: 1280, height: 1400 } });
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
}, 60_000);

/** The state as the API returns it now (the stack runs the dashboard with DASHBOARD_ACCESS=public). */
async function apiState(): Promise<DashboardState> {
  const r = await fetch(`${stack.edgeUrl}/dashboard/v1/state`);
  expect(r.status).toBe(200);
  return DashboardState.parse(await r.json());
}

const hook = (scope: string, field: string) => page.locator(`${scope} [data-field="${field}"]`.trim());
const valueOf = async (scope: string, field: string) => {
  const v = await hook(scope, field).getAttribute("data-value");
  return v === null || v === "" ? null : Number(v);
};
const textOf = async (scope: string, field: string) => (await hook(scope, field).textContent())?.trim() ?? "";
/** Opens the dashboard unless an earlier test did (each test also runs alone). */
async function opened(): Promise<void> {
  if (!page.url().endsWith("/dashboard?refreshMs=500")) await page.goto(`${stack.dashboardUrl}?refreshMs=500`);
  await page.waitForSelector('#dashboard[data-state="ok"]', { timeout: 30_000 });
}

/** Waits until the page shows a state generated after `ms`. */
const renderedAfter = (ms: number) => expect.poll(async () => Number(await page.locator("#dashboard").getAttribute("data-updated-at")), { timeout: 15_000 }).toBeGreaterThan(ms);

/** What echarts drew in a site's chart: the power axis' extent, each series' colour, and every label's box. */
interface DrawnChart {
  powerAxis: [number, number];
  colours: Record<string, string>;
  labels: { text: string; x: number; y: number; w: number; h: number }[];
}

/** The little of the DOM and of echarts' model the page-side function below reads (this project compiles without DOM types). */
interface PageNode {
  textContent: string | null;
  getBoundingClientRect(): { x: number; y: number; width: number; height: number };
  querySelectorAll(selector: string): Iterable<PageNode>;
}
interface PageGlobals {
  document: { querySelector(selector: string): PageNode };
  echarts: {
    getInstanceByDom(el: PageNode): {
      getModel(): {
        getComponent(kind: string, index: number): { axis: { scale: { getExtent(): [number, number] } } };
        getSeries(): { name: string; getData(): { getVisual(key: string): { stroke?: string; fill?: string } } }[];
      };
    };
  };
}

function drawnChart(site: string): Promise<DrawnChart> {
  return page.evaluate((id) => {
    const { document, echarts } = globalThis as unknown as PageGlobals;
    const plot = document.querySelector(`[data-site="${id}"] .chart .plot`);
    const model = echarts.getInstanceByDom(plot).getModel();
    const colours: Record<string, string> = {};
    for (const s of model.getSeries()) {
      const style = s.getData().getVisual("style");
      colours[s.name] = String(style.stroke ?? style.fill);
    }
    const labels = [...plot.querySelectorAll("svg text")]
      .map((t) => ({ text: (t.textContent ?? "").trim(), r: t.getBoundingClientRect() }))
      .filter((l) => l.text !== "" && l.r.width > 0)
      .map((l) => ({ text: l.text, x: l.r.x, y: l.r.y, w: l.r.width, h: l.r.height }));
    return { powerAxis: model.getComponent("yAxis", 0).axis.scale.getExtent(), colours, labels };
  }, site);
}

/** Pairs of labels whose boxes overlap by more than a pixel each way. */
function overlaps(labels: DrawnChart["labels"]): string[] {
  const out: string[] = [];
  labels.forEach((a, i) =>
    labels.slice(i + 1).forEach((b) => {
      const dx = Math.min(a.x + a.w, b.x + b.w) - Math.max(a.x, b.x);
      const dy = Math.min(a.y + a.h, b.y + b.h) - Math.max(a.y, b.y);
      if (dx > 1 && dy > 1) out.push(`"${a.text}" / "${b.text}"`);
    }),
  );
  return out;
}

describe("the dashboard in a real browser (Debian chromium via playwright-core)", () => {
  it("is where the root leads, and says loading (not 'none yet') until the first state arrives", async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    await page.route("**/dashboard/v1/state", async (route) => {
      await held;
      await route.continue();
    });
    try {
      await page.goto(`${stack.edgeUrl}/?refreshMs=500`);
      expect(new URL(page.url()).pathname).toBe("/dashboard");
      expect(await page.locator("#dashboard").getAttribute("data-state")).toBe("loading");
      expect(await textOf("", "plan-version")).toBe("loading…");
      expect(await page.locator("body").innerText()).not.toContain("none yet");
    } finally {
      release();
      await page.unrouteAll({ behavior: "wait" });
    }
    await page.waitForSelector('#dashboard[data-state="ok"]', { timeout: 30_000 });
    const api = await apiState();
    expect(api.plan).not.toBeNull();
    // The plan the page shows is the API's (a replan may land between two reads: poll until both agree).
    await expect.poll(async () => (await valueOf("", "plan-version")) === (await apiState()).plan!.version, { timeout: 15_000 }).toBe(true);
    expect(await textOf("", "plan-version")).toBe(`v${await valueOf("", "plan-version")}`);
  });

  it("scales each site's power chart to what its GPUs can draw, with one colour per series and no overlapping labels", async () => {
    await opened();
    for (const { site } of stack.sites) {
      const card = `[data-site="${site.id}"]`;
      await expect.poll(() => page.locator(card).count()).toBe(1);
      await expect.poll(() => valueOf(card, "gpus")).toBe(site.gpus);
      await expect.poll(() => valueOf(card, "power-draw-w"), { timeout: 15_000 }).toBeGreaterThan(0);
    }
    const api = await apiState();
    await renderedAfter(api.generatedAtMs);
    const charts: Record<string, DrawnChart> = {};
    for (const { site } of stack.sites) {
      const card = `[data-site="${site.id}"]`;
      const capacityW = site.gpus * H100_TDP_W * SERVER_OVERHEAD;
      expect(api.sites.find((s) => s.id === site.id)!.power.capacityW).toBeCloseTo(capacityW, 6);
      expect(await valueOf(card, "power-capacity-w")).toBeCloseTo(capacityW, 6);
      const chart = (charts[site.id] = await drawnChart(site.id));
      const drawW = (await valueOf(card, "power-draw-w"))!;
      // The axis ends at the site's full power (its draw never exceeds it), so the draw is no flat line at the bottom.
      expect(chart.powerAxis[0]).toBe(0);
      expect(chart.powerAxis[1] * 1e3).toBeCloseTo(capacityW, 3);
      expect(drawW).toBeLessThanOrEqual(capacityW);
      expect(drawW / capacityW).toBeGreaterThan(0.05);
      for (const name of ["kW", "gCO₂/kWh", "draw", "envelope", "plan cap now", "carbon"]) expect(chart.labels.map((l) => l.text)).toContain(name);
      expect(overlaps(chart.labels), `${site.id}: overlapping labels`).toEqual([]);
      const colours = Object.values(chart.colours);
      expect(new Set(colours).size, `${site.id}: ${JSON.stringify(chart.colours)}`).toBe(colours.length);
    }
    const [first, ...rest] = Object.values(charts);
    for (const c of rest) expect(c.colours).toEqual(first!.colours);
  });

  it("gives SLO attainment over the last 5 minutes with the count it rests on, and 'too few requests' below 30", async () => {
    await opened();
    const send = async (n: number) => {
      const outcomes = await Promise.all(Array.from({ length: n }, (_, i) => stack.load!.send(40 + i, 16, i % 2 === 0)));
      expect(outcomes.filter((o) => !o.ok).map((o) => o.error)).toEqual([]);
    };
    const judgedReaches = async (n: number) => {
      await expect.poll(async () => (await apiState()).slo.judged, { timeout: 20_000 }).toBe(n);
      const api = await apiState();
      await renderedAfter(api.generatedAtMs);
      return api;
    };
    await send(10);
    const few = await judgedReaches(10);
    expect(few.slo.attainment).toBeNull();
    expect(await textOf("", "fleet-slo-label")).toBe("SLO attainment (last 5 min, 10 requests)");
    expect(await textOf("", "fleet-slo-attainment")).toBe("too few requests");
    expect(await valueOf("", "fleet-slo-attainment")).toBeNull();

    await send(30);
    const api = await judgedReaches(40);
    expect(api.slo.attainment).not.toBeNull();
    expect(api.slo.met).toBe(Math.round(api.slo.attainment! * 40));
    expect(await textOf("", "fleet-slo-label")).toBe("SLO attainment (last 5 min, 40 requests)");
    expect(await valueOf("", "fleet-slo-attainment")).toBeCloseTo(api.slo.attainment!, 12);
    expect(await textOf("", "fleet-slo-attainment")).toBe(`${(api.slo.attainment! * 100).toLocaleString("en-US", { maximumFractionDigits: 1 })} %`);
    expect(await textOf("", "fleet-slo-note")).toContain(`${api.slo.met} of 40 met`);
    // Every request is counted once: by its class and by the site that answered it.
    expect(api.classes.reduce((n, c) => n + c.sloWindow.judged, 0)).toBe(40);
    expect(api.sites.reduce((n, s) => n + s.sloWindow.judged, 0)).toBe(40);
    for (const s of api.sites) expect(await valueOf(`[data-site="${s.id}"]`, "slo-attainment")).toBe(s.sloWindow.attainment);
  });

  it("shows what the policy decides per site: the combined policy's EcoFreq clocks, LLF queues and packing", async () => {
    await opened();
    await expect.poll(() => page.locator('[data-field="policy-levers"]').textContent(), { timeout: 15_000 }).toContain("greenference");
    for (const { site } of stack.sites) {
      const row = page.locator(`[data-decision-site="${site.id}"]`);
      await expect.poll(() => row.count()).toBe(1);
      expect(await row.locator("td").nth(5).textContent()).toBe("llf / pack / join-idle");
    }
    const clocks = await page.locator("[data-decision-site] td:nth-child(5)").allTextContents();
    expect(clocks.some((c) => c.startsWith("ecofreq "))).toBe(true);
  });

  it("shows each API key's carbon budget and what it spent this period in the key table", async () => {
    const { id, key } = await stack.admin<{ id: string; key: string }>("POST", "/admin/v1/keys", { name: "dashboard-key", carbonBudget: { gco2e: 50, period: "day" } });
    const chat = await fetch(`${stack.edgeUrl}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${key}` }, body: JSON.stringify({ model: stack.config.model, messages: [{ role: "user", content: "hi" }], max_tokens: 8 }) });
    expect(chat.status).toBe(200);
    await chat.text();
    await page.goto(`${stack.dashboardUrl}?refreshMs=500`);
    const row = `[data-key="${id}"]`;
    await expect.poll(async () => valueOf(row, "key-spent-g"), { timeout: 15_000 }).toBeGreaterThan(0);
    expect(await valueOf(row, "key-budget-g")).toBe(50);
    expect(["on pace", "over pace"]).toContain(await textOf(row, "key-state"));
    expect(await valueOf(row, "key-today-g")).toBe(await valueOf(row, "key-spent-g"));
  });

  it("labels an envelope above the site's capacity instead of stretching the scale, follows a power drop, and saves a screenshot", async () => {
    await opened();
    const card = '[data-site="wind-erco"]';
    const capacityW = (await valueOf(card, "power-capacity-w"))!;
    await stack.setPowerOverride("wind-erco", 40 * capacityW);
    await expect.poll(() => valueOf(card, "power-envelope-w"), { timeout: 20_000 }).toBe(40 * capacityW);
    const above = await drawnChart("wind-erco");
    expect(above.powerAxis[1] * 1e3).toBeCloseTo(capacityW, 3);
    const envelopeText = await textOf(card, "power-envelope-w");
    expect(above.labels.map((l) => l.text)).toContain(`envelope ${envelopeText} (above site capacity)`);
    expect(overlaps(above.labels)).toEqual([]);

    const stamp = await page.locator("#dashboard").getAttribute("data-updated-at");
    await stack.setPowerOverride("wind-erco", 0);
    await expect.poll(() => valueOf(card, "power-envelope-w"), { timeout: 20_000 }).toBe(0);
    expect(await page.locator("#dashboard").getAttribute("data-updated-at")).not.toBe(stamp);
    expect((await drawnChart("wind-erco")).labels.some((l) => l.text.includes("above site capacity"))).toBe(false);

    await stack.setPowerOverride("wind-erco", null);
    await renderedAfter((await apiState()).generatedAtMs);
    await mkdir(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, "dashboard.png"), fullPage: true });
  });
});
