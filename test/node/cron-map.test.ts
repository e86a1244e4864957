import { fileURLToPath } from "node:url";
import { experimental_readRawConfig } from "wrangler";
import { describe, expect, it } from "vitest";
import { CRON_HANDLERS, handlersForCron } from "../../functions/cron-map.ts";

describe("cron map", () => {
  it("has handlers for exactly the cron triggers in wrangler.toml", () => {
    // Read with wrangler's own parser, so the test sees what `wrangler deploy` sees.
    const { rawConfig } = experimental_readRawConfig({ config: fileURLToPath(new URL("../../wrangler.toml", import.meta.url)) });
    const crons = rawConfig.triggers?.crons ?? [];
    expect(crons.length).toBeGreaterThan(0);
    expect(Object.keys(CRON_HANDLERS).sort()).toEqual([...crons].sort());
  });

  it("finds no handler for an unknown expression or an inherited property name", () => {
    expect(handlersForCron("*/5 * * * *")).toEqual(["forecast-refresh", "planner-long"]);
    expect(handlersForCron("* * * * *")).toBeUndefined();
    expect(handlersForCron("constructor")).toBeUndefined();
  });
});
