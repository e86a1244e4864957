import { deferralStub } from "../../../durable-objects/deferral-do.ts";
import { FLEX_DEADLINE_HEADER, FLEX_LIMITS, type FlexDecision, type FlexHold, type ServiceTier } from "../../core/schemas/flex.ts";
import type { ClassId } from "../../core/schemas/ids.ts";
import { openAiError } from "../openai-error.ts";
import { newRequestId } from "../request-id.ts";

/** How long past a held request's deadline the edge waits for the scheduler's word before serving it itself. */
const DEADLINE_GRACE_MS = 2_000;

/** What the serving path needs to honour `service_tier`: the tier asked for and, for flex, how to hold the request. */
export interface TierDispatch {
  serviceTier?: ServiceTier;
  /** Holds the request (of `classId`, its body `bytes` long) until the scheduler decides. */
  hold?: (classId: ClassId, bytes: number) => Promise<FlexDecision>;
}

/**
 * The request's service tier: none asked (nothing changes), "auto" or "default" (served at once),
 * or "flex" with its deadline from the FLEX_DEADLINE_HEADER header (whole seconds, 1 to
 * FLEX_LIMITS.maxDeadlineS; FLEX_LIMITS.defaultDeadlineS when absent; a bad value is a 400 naming
 * the header), held at the deferral scheduler until it releases it.
 *
 * @example
 * const tier = serviceTierOf(request, body.service_tier, "key_1", Date.now(), env);
 * if (tier instanceof Response) return tier; // 400
 */
export function serviceTierOf(request: Request, asked: ServiceTier | null | undefined, owner: string, nowMs: number, env: Env): TierDispatch | Response {
  if (asked === undefined || asked === null) return {};
  if (asked !== "flex") return { serviceTier: asked };
  const raw = request.headers.get(FLEX_DEADLINE_HEADER);
  const deadlineS = raw === null ? FLEX_LIMITS.defaultDeadlineS : /^\d{1,5}$/.test(raw.trim()) ? Number(raw.trim()) : NaN;
  if (!(deadlineS >= 1 && deadlineS <= FLEX_LIMITS.maxDeadlineS)) {
    return openAiError(400, `${FLEX_DEADLINE_HEADER} must be whole seconds from 1 to ${FLEX_LIMITS.maxDeadlineS} (default ${FLEX_LIMITS.defaultDeadlineS})`, { param: FLEX_DEADLINE_HEADER, code: "invalid_value" });
  }
  const id = newRequestId();
  return { serviceTier: "flex", hold: (classId, bytes) => holdFlex(env, { id, owner, classId, bytes, arrivedAtMs: nowMs, deadlineMs: nowMs + deadlineS * 1000 }) };
}

/**
 * Holds a flex request at the deferral scheduler until it decides. The client's connection stays
 * open meanwhile; if the scheduler's object restarts the request asks again (it is in the edge's
 * memory, not the object's), and whatever happens it is served by its deadline: at once when the
 * scheduler fails twice or has not answered shortly after the deadline.
 */
export async function holdFlex(env: Env, hold: FlexHold): Promise<FlexDecision> {
  const stub = deferralStub(env);
  let timer: ReturnType<typeof setTimeout> | null = null;
  const backstop = new Promise<FlexDecision>((resolve) => {
    timer = setTimeout(() => resolve({ kind: "serve-now", why: "the scheduler did not decide by the deadline" }), Math.max(0, hold.deadlineMs - Date.now()) + DEADLINE_GRACE_MS);
  });
  const ask = async (): Promise<FlexDecision> => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await stub.holdFlex(hold);
      } catch (error) {
        if (attempt >= 2) return { kind: "serve-now", why: `the scheduler failed: ${error instanceof Error ? error.message : String(error)}` };
      }
    }
  };
  try {
    const decision = await Promise.race([ask(), backstop]);
    if (decision.kind === "serve-now" && decision.why.startsWith("the scheduler did not decide")) await stub.dropFlex(hold.id).catch(() => undefined);
    return decision;
  } finally {
    if (timer !== null) clearTimeout(timer);
  }
}

/** The 429 for a flex request the edge cannot hold now (its bounds are full), with Retry-After. */
export function flexFull(decision: Extract<FlexDecision, { kind: "full" }>): Response {
  const response = openAiError(429, `The edge cannot hold this flex request now: ${decision.why}. Retry after ${decision.retryAfterS} s, or send it without service_tier "flex".`, { param: "service_tier", code: "flex_capacity_exceeded" });
  response.headers.set("retry-after", String(decision.retryAfterS));
  return response;
}
