import { openAiError } from "../openai-error.ts";

/** What OpenAI's cursor-paged lists (`GET /v1/batches`, `GET /v1/files`) take: a page size and the id to start after. */
export interface ListQuery {
  limit: number;
  after: string | null;
}

export interface ListBounds {
  /** The page size when `limit` is absent. */
  defaultLimit: number;
  /** The largest `limit` accepted. */
  maxLimit: number;
  /** The ids `after` may be, and what they are called in the 400 that refuses another. */
  afterId: RegExp;
  afterWhat: string;
}

/** `limit` and `after` from a list's query, or a 400 naming the parameter that is wrong. */
export function listQuery(query: URLSearchParams, bounds: ListBounds): ListQuery | Response {
  const limitRaw = query.get("limit") ?? String(bounds.defaultLimit);
  // Digits only, no longer than the bound's: "1e2", " 5" and 20-digit numbers are refused, not coerced.
  const limit = new RegExp(`^\\d{1,${String(bounds.maxLimit).length}}$`).test(limitRaw) ? Number(limitRaw) : NaN;
  if (!(limit >= 1 && limit <= bounds.maxLimit)) return openAiError(400, `limit must be a whole number from 1 to ${bounds.maxLimit}`, { param: "limit", code: "invalid_value" });
  const after = query.get("after");
  if (after !== null && !bounds.afterId.test(after)) return openAiError(400, `after must be ${bounds.afterWhat}`, { param: "after", code: "invalid_value" });
  return { limit, after };
}

export type ListOrder = "asc" | "desc";

/** `order` from a list's query (`desc` when absent), or a 400 naming it. */
export function listOrder(query: URLSearchParams): ListOrder | Response {
  const order = query.get("order") ?? "desc";
  if (order === "asc" || order === "desc") return order;
  return openAiError(400, `order must be "asc" or "desc", not "${order.slice(0, 32)}"`, { param: "order", code: "invalid_value" });
}

/** OpenAI's list object for one page; first_id and last_id are null on an empty page. */
export function listPage<T extends { id: string }>(data: T[], hasMore: boolean): Response {
  return Response.json({ object: "list", data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: hasMore });
}
