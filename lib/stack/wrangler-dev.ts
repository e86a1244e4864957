import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { disableDevtoolsNetworkCapture } from "./devtools-network.ts";
import { ManagedProcess } from "./managed-process.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

export interface WranglerDevOptions {
  port: number;
  /** Wrangler's local Durable Object storage. */
  persistDir: string;
  /** Worker vars (and, locally, secrets such as ADMIN_TOKEN). */
  vars: Record<string, string>;
  /** Port of wrangler's DevTools inspector proxy. */
  inspectorPort: number;
  /** Keep wrangler's DevTools network capture on (it adds ~4 ms to each request the Worker forwards). */
  devtoolsNetworkCapture: boolean;
  log?: (line: string) => void;
}

/** Lines of wrangler's output that say nothing useful on a machine without internet access. */
const NOISE = /Request\.cf|getaddrinfo ENOTFOUND|GetAddrInfoReqWrap|wrangler types|^\s*at |^\s*$/;

/**
 * `wrangler dev` of this project on 127.0.0.1: workerd with the Durable Objects, and scheduled
 * handlers reachable at `/__scheduled?cron=...` (`--test-scheduled`), which the local stack calls on
 * its sped-up clock. Resolves once the Worker answers (and, unless asked to keep it, DevTools network
 * capture is off: see disableDevtoolsNetworkCapture).
 */
export async function startWranglerDev(o: WranglerDevOptions): Promise<{ url: string; process: ManagedProcess }> {
  const vars = Object.entries(o.vars).flatMap(([k, v]) => ["--var", `${k}:${v}`]);
  const wrangler = ManagedProcess.start({
    name: "wrangler dev",
    command: process.execPath,
    args: [createRequire(import.meta.url).resolve("wrangler/bin/wrangler.js"), "dev", "--ip", "127.0.0.1", "--port", String(o.port), "--inspector-port", String(o.inspectorPort), "--test-scheduled", "--persist-to", o.persistDir, "--show-interactive-dev-session=false", "--log-level", "warn", ...vars],
    cwd: ROOT,
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", WRANGLER_LOG: "warn" },
    onLine: (line) => {
      if (!NOISE.test(line)) o.log?.(line);
    },
  });
  const url = `http://127.0.0.1:${o.port}`;
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    if (!wrangler.alive) throw new Error(`wrangler dev exited while starting:\n${wrangler.tail()}`);
    try {
      if ((await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2_000) })).ok) {
        if (!o.devtoolsNetworkCapture) await disableDevtoolsNetworkCapture(o.inspectorPort);
        return { url, process: wrangler };
      }
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  await wrangler.stop();
  throw new Error(`wrangler dev did not answer on ${url} within 120 s:\n${wrangler.tail()}`);
}
