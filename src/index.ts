import { createApp } from "./worker/app.ts";
import { runScheduled } from "../functions/schedules.ts";

export { SiteDO } from "../durable-objects/site-do.ts";
export { ControlDO } from "../durable-objects/control-do.ts";
export { RateLimiterDO } from "../durable-objects/rate-limiter-do.ts";
export { CarbonLedgerDO } from "../durable-objects/carbon-ledger-do.ts";
export { BatchDO } from "./worker/batch/batch-do.ts";
export { PredictorDO } from "../durable-objects/predictor-do.ts";
export { DeferralDO } from "../durable-objects/deferral-do.ts";

/** One app per isolate: its snapshot cache, predictor and counters live as long as the isolate. */
const app = createApp({ siteClient: (url, init) => fetch(url, init) });

export default {
  fetch: (request, env, ctx) => app.fetch(request, env, ctx),
  // A scheduled run may publish a plan (the planners) or change routing state: this isolate routes
  // on it from its next request instead of after the snapshot's TTL, as after an admin change.
  scheduled: (controller, env, ctx) => {
    ctx.waitUntil(runScheduled(controller, env).finally(() => app.context.cache.invalidate()));
  },
} satisfies ExportedHandler<Env>;
