import { z } from "zod";
import { ClassId, EpochMs } from "./ids.ts";

/**
 * `service_tier` on a chat or completion request. "flex" lets the edge hold the request up to its
 * deadline and release it at the cleanest moment and site within it; "auto" and "default" are
 * served at once. OpenAI's "scale" and "priority" have no meaning here and are refused (400).
 */
export const ServiceTier = z.enum(["auto", "default", "flex"]);
export type ServiceTier = z.infer<typeof ServiceTier>;

/** The request header that gives a flex request's deadline: whole seconds from its arrival. */
export const FLEX_DEADLINE_HEADER = "x-greenference-flex-deadline-s";

/**
 * Bounds of the flex tier. The default deadline is the 15 minutes OpenAI advises a flex client to
 * wait; the most a request may ask for is an hour. Held requests keep their bodies in the edge's
 * memory, so their number and bytes are bounded per key and in all.
 */
export const FLEX_LIMITS = {
  defaultDeadlineS: 900,
  maxDeadlineS: 3600,
  heldPerKey: 64,
  heldBytesPerKey: 16 * 1024 * 1024,
  held: 1000,
  heldBytes: 128 * 1024 * 1024,
} as const;

/** A flex request as the edge asks the deferral scheduler to hold it. */
export const FlexHold = z.object({
  id: z.string().min(1).max(128),
  /** The API key that sent it ("anonymous" while the API is open). */
  owner: z.string().min(1).max(128),
  classId: ClassId,
  /** The request body's size: what holding it keeps in memory. */
  bytes: z.number().int().nonnegative(),
  arrivedAtMs: EpochMs,
  deadlineMs: EpochMs,
});
export type FlexHold = z.infer<typeof FlexHold>;

/**
 * What becomes of a held flex request: released to a site at the cleanest moment within its
 * deadline (it runs there in the capacity interactive traffic leaves, `service_tier: "flex"`);
 * served at once because waiting could not meet its deadline or the scheduler cannot plan it
 * (`service_tier: "default"`); or refused because the edge holds as many as it may.
 */
export type FlexDecision =
  | { kind: "release"; site: string; heldMs: number }
  | { kind: "serve-now"; why: string }
  | { kind: "full"; why: string; retryAfterS: number };
