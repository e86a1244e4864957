/** The plan slice's wire contract lives in the core's schemas, shared with the edge. */
export { SitePlanSlice } from "../../src/core/schemas/plan-slice.ts";

/** The version a plan body claims, even when the body is otherwise invalid (for the refusal report). */
export function claimedVersion(body: unknown): number | undefined {
  const v = (body as { version?: unknown } | null)?.version;
  return typeof v === "number" && Number.isSafeInteger(v) && v >= 0 ? v : undefined;
}

/** The Planner-S revision a plan body claims (0 when it claims none). */
export function claimedRevision(body: unknown): number {
  const r = (body as { revision?: unknown } | null)?.revision;
  return typeof r === "number" && Number.isSafeInteger(r) && r >= 0 ? r : 0;
}
