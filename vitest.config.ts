import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";

/**
 * One config, three projects: the pure core and the host agent/CLI run on Node; Worker, Durable
 * Object and cron code runs inside workerd through the Workers Vitest integration.
 */
export default defineConfig({
  test: {
    projects: [
      {
        test: { name: "core", environment: "node", include: ["src/core/**/*.test.ts"] },
      },
      {
        test: {
          name: "node",
          environment: "node",
          include: ["host-agent/**/*.test.ts", "cli/**/*.test.ts", "test/node/**/*.test.ts"],
          testTimeout: 60_000,
        },
      },
      {
        plugins: [cloudflareTest({ wrangler: { configPath: "./wrangler.toml" } })],
        test: { name: "worker", include: ["test/worker/**/*.test.ts"] },
      },
    ],
  },
});
