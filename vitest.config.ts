import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

/**
 * One config, four projects: the pure core and the host agent/CLI run on Node; Worker, Durable
 * Object and cron code runs inside workerd through the Workers Vitest integration; e2e runs the
 * whole local stack (test/e2e).
 */
export default defineConfig({
  test: {
    projects: [
      {
        // Harness timeouts, not assertions: the three projects share 2 cores in CI, and a first test
        // in a fresh workerd isolate can take seconds there.
        test: { name: "core", environment: "node", include: ["src/core/**/*.test.ts"], testTimeout: 30_000 },
      },
      {
        test: {
          name: "node",
          environment: "node",
          include: ["host-agent/**/*.test.ts", "cli/**/*.test.ts", "lib/**/*.test.ts", "bench/**/*.test.ts", "test/node/**/*.test.ts"],
          testTimeout: 60_000,
        },
      },
      {
        // The whole system on loopback: wrangler dev, host agent processes, browser. One file at a
        // time (each starts its own stack); `npm test` runs this project after the others.
        test: {
          name: "e2e",
          environment: "node",
          include: ["test/e2e/**/*.test.ts"],
          testTimeout: 120_000,
          hookTimeout: 240_000,
          fileParallelism: false,
        },
      },
      {
        plugins: [cloudflareTest({ wrangler: { configPath: "./wrangler.toml" } })],
        // The Worker imports HiGHS's WebAssembly by its file, as wrangler resolves it; Vite keeps to
        // the package's exports, which name that file "highs/runtime".
        resolve: { alias: { "highs/build/highs.wasm": fileURLToPath(new URL("node_modules/highs/build/highs.wasm", import.meta.url)) } },
        test: { name: "worker", include: ["test/worker/**/*.test.ts"], testTimeout: 30_000 },
      },
    ],
  },
});
