import { mkdir } from "node:fs/promises";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LocalStack } from "../../cli/stack/local-stack.ts";
import { startTestStack } from "./stack.test-helper.ts";

/** Debian's chromium (`.ci/run` installs it with apt-get); CHROMIUM_PATH overrides. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
/** Where the screenshot goes (the test output folder). */
const ARTIFACTS = join(process.cwd(), "out", "test-artifacts");

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

const envelopeOf = async (site: string) => Number(await page.locator(`[data-site="${site}"] [data-field="power-envelope-w"]`).getAttribute("data-value"));

describe("the dashboard in a real browser (Debian chromium via playwright-core)", () => {
  it("shows every site with its power, carbon and GPUs, and the plan", async () => {
    await page.goto(`${stack.dashboardUrl}?refreshMs=500`);
    await page.waitForSelector('#dashboard[data-state="ok"]', { timeout: 30_000 });
    for (const { site } of stack.sites) {
      const card = page.locator(`[data-site="${site.id}"]`);
      await expect.poll(() => card.count()).toBe(1);
      await expect.poll(async () => Number(await card.locator('[data-field="gpus"]').getAttribute("data-value"))).toBe(site.gpus);
      await expect.poll(() => envelopeOf(site.id), { timeout: 15_000 }).toBeGreaterThan(0);
    }
    const cisoCarbon = await page.locator('[data-site="grid-ciso"] [data-field="carbon-g-per-kwh"]').getAttribute("data-value");
    expect(Number(cisoCarbon)).toBeGreaterThan(0);
    await expect.poll(async () => Number(await page.locator('[data-field="plan-version"]').getAttribute("data-value") ?? (await page.locator('[data-field="plan-version"]').textContent())), { timeout: 15_000 }).toBeGreaterThanOrEqual(1);
  });

  it("shows what the policy decides per site: the combined policy's EcoFreq clocks, LLF queues and packing", async () => {
    await expect.poll(() => page.locator('[data-field="policy-levers"]').textContent(), { timeout: 15_000 }).toContain("greenference");
    for (const { site } of stack.sites) {
      const row = page.locator(`[data-decision-site="${site.id}"]`);
      await expect.poll(() => row.count()).toBe(1);
      expect(await row.locator("td").nth(5).textContent()).toBe("llf / pack");
    }
    const clocks = await page.locator("[data-decision-site] td:nth-child(5)").allTextContents();
    expect(clocks.some((c) => c.startsWith("ecofreq "))).toBe(true);
  });

  it("changes when a site's power drops, and saves a screenshot", async () => {
    const before = await envelopeOf("wind-erco");
    const stamp = await page.locator("#dashboard").getAttribute("data-updated-at");
    await stack.setPowerOverride("wind-erco", 0);
    await expect.poll(() => envelopeOf("wind-erco"), { timeout: 20_000 }).toBe(0);
    expect(before).toBeGreaterThan(0);
    expect(await page.locator("#dashboard").getAttribute("data-updated-at")).not.toBe(stamp);
    await mkdir(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, "dashboard.png"), fullPage: true });
    await stack.setPowerOverride("wind-erco", null);
  });
});
