import { dirname } from "node:path";
import { Miniflare } from "miniflare";

/** Settings shared by both Workers of the throughput comparison. */
const COMMON = { host: "127.0.0.1", port: 0, compatibilityDate: "2026-04-01", compatibilityFlags: ["nodejs_compat"], modules: true } as const;

/**
 * The real Worker in local workerd through Miniflare's API, from the bundle `wrangler deploy`
 * would upload, with its Durable Objects (SQLite-backed, in memory), the admin token and the
 * inference API open. The heartbeat timeout is long so sites stay healthy for the run without a
 * heartbeat loop.
 */
export function routingWorker(main: string, adminToken: string): Miniflare {
  return new Miniflare({
    ...COMMON,
    scriptPath: main,
    modulesRoot: dirname(main),
    // Bundled, every JavaScript module wrangler emits beside the entry comes from a Text rule of
    // wrangler.toml (browser scripts the dashboard serves), not code the Worker runs; the
    // WebAssembly module is HiGHS, which the planners solve with.
    modulesRules: [
      { type: "Text", include: ["**/*.js"] },
      { type: "CompiledWasm", include: ["**/*.wasm"] },
    ],
    durableObjects: {
      SITE: { className: "SiteDO", useSQLite: true },
      CONTROL: { className: "ControlDO", useSQLite: true },
      RATE_LIMITER: { className: "RateLimiterDO", useSQLite: true },
    },
    // The inference API opened: the bench measures routing, not API-key checks.
    bindings: { HEARTBEAT_TIMEOUT_S: "600", ADMIN_TOKEN: adminToken, INFERENCE_ACCESS: "open" },
  });
}

/** A Worker that only imports one WebAssembly module (never instantiated) and answers "ok". */
export function wasmImportWorker(wasm: Uint8Array): Miniflare {
  return new Miniflare({
    ...COMMON,
    modules: [
      { type: "ESModule", path: "index.mjs", contents: `import module from "./module.wasm";\nexport default { fetch: () => new Response(module ? "ok" : "") };` },
      { type: "CompiledWasm", path: "module.wasm", contents: wasm },
    ],
  });
}

/** The baseline: a Worker that forwards every request to the upstream unchanged. */
export function passThroughWorker(upstream: string): Miniflare {
  return new Miniflare({
    ...COMMON,
    bindings: { UPSTREAM: upstream },
    script: `export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    return fetch(env.UPSTREAM + url.pathname + url.search, { method: request.method, headers: request.headers, body: request.body });
  },
};`,
  });
}
