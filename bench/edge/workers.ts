import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { Miniflare } from "miniflare";
import { experimental_readRawConfig } from "wrangler";

/** Settings shared by both Workers of the throughput comparison. */
const COMMON = { host: "127.0.0.1", port: 0, compatibilityDate: "2026-04-01", compatibilityFlags: ["nodejs_compat"], modules: true } as const;

/**
 * The real Worker in local workerd through Miniflare's API, from the bundle `wrangler deploy`
 * would upload, with its Durable Objects and R2 buckets (in memory), the admin token and the
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
    ...wranglerBindings(),
    // The inference API opened: the bench measures routing, not API-key checks.
    bindings: { HEARTBEAT_TIMEOUT_S: "600", ADMIN_TOKEN: adminToken, INFERENCE_ACCESS: "open" },
  });
}

/**
 * The Durable Objects (SQLite-backed, as the migrations create them) and R2 buckets wrangler.toml
 * binds, read with wrangler's own parser: the Worker reaches every one of them on some path (the
 * output-length predictor on every inference request), so the bench binds what a deploy binds.
 */
function wranglerBindings() {
  const { rawConfig } = experimental_readRawConfig({ config: fileURLToPath(new URL("../../wrangler.toml", import.meta.url)) });
  const durableObjects = Object.fromEntries((rawConfig.durable_objects?.bindings ?? []).map((b: { name: string; class_name: string }) => [b.name, { className: b.class_name, useSQLite: true }]));
  const r2Buckets = (rawConfig.r2_buckets ?? []).map((b: { binding: string }) => b.binding);
  return { durableObjects, r2Buckets };
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
