import { createApp } from "./worker/app.ts";
import { runScheduled } from "../functions/schedules.ts";

export { SiteDO } from "../durable-objects/site-do.ts";
export { ControlDO } from "../durable-objects/control-do.ts";
export { RateLimiterDO } from "../durable-objects/rate-limiter-do.ts";

/** One app per isolate: its snapshot cache, predictor and counters live as long as the isolate. */
const app = createApp({ siteClient: (url, init) => fetch(url, init) });

export default {
  fetch: (request, env, ctx) => app.fetch(request, env, ctx),
  scheduled: (controller, env, ctx) => {
    ctx.waitUntil(runScheduled(controller, env));
  },
} satisfies ExportedHandler<Env>;
