import { execFile } from "node:child_process";
import { mkdtemp, readdir, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
/** Cloudflare's limit on a Worker's compressed size on the Free plan (the paid plans allow 10 MB). */
const FREE_PLAN_LIMIT_KIB = 3 * 1024;

let outdir: string;
let output: string;

// What `wrangler deploy` would upload, built without uploading (docs/deploy.md).
beforeAll(async () => {
  outdir = await mkdtemp(join(tmpdir(), "greenference-dry-run-"));
  const r = await run("npx", ["wrangler", "deploy", "--dry-run", "--outdir", outdir], { cwd: ROOT, env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "1" }, maxBuffer: 16 << 20 });
  output = r.stdout + r.stderr;
}, 120_000);
afterAll(async () => {
  if (outdir) await rm(outdir, { recursive: true, force: true });
});

describe("wrangler deploy --dry-run", () => {
  it("bundles the Worker with the dashboard's scripts as separate text modules", async () => {
    expect((await stat(join(outdir, "index.js"))).size).toBeGreaterThan(0);
    const files = await readdir(outdir);
    expect(files.some((f) => f.endsWith("-dashboard-client.js"))).toBe(true);
    expect(files.some((f) => f.endsWith("-echarts.common.min.js"))).toBe(true);
  });

  it("binds the three Durable Objects and the vars of wrangler.toml, within the Free plan's size limit", () => {
    for (const binding of ["env.SITE (SiteDO)", "env.CONTROL (ControlDO)", "env.RATE_LIMITER (RateLimiterDO)", "env.HEARTBEAT_TIMEOUT_S", "env.DASHBOARD_ACCESS"]) expect(output).toContain(binding);
    const gzipKiB = Number(/Total Upload: [\d.]+ KiB \/ gzip: ([\d.]+) KiB/.exec(output)?.[1]);
    expect(gzipKiB).toBeGreaterThan(0);
    expect(gzipKiB).toBeLessThan(FREE_PLAN_LIMIT_KIB);
  });
});
