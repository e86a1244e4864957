import { AutoRouter } from "itty-router";
import { openAiError } from "./worker/openai-error.ts";
import { runScheduled } from "../functions/schedules.ts";

export { SiteDO } from "../durable-objects/site-do.ts";
export { ControlDO } from "../durable-objects/control-do.ts";

const router = AutoRouter({
  // itty-router calls `missing` from its finally stage as (response, request, ...args).
  missing: (_response: unknown, request: Request) =>
    openAiError(404, `No route for ${request.method} ${new URL(request.url).pathname}`, { code: "not_found" }),
  catch: (error: unknown) => openAiError(500, error instanceof Error ? error.message : String(error)),
});

router.get("/healthz", () => ({ status: "ok" }));

export default {
  fetch: (request, env, ctx) => router.fetch(request, env, ctx),
  scheduled: (controller, env, ctx) => {
    ctx.waitUntil(runScheduled(controller, env));
  },
} satisfies ExportedHandler<Env>;
