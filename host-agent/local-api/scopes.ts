import { createHash, timingSafeEqual } from "node:crypto";

/** Read: status and metrics. Control: clock and plan actions (and everything read allows). */
export type Scope = "read" | "control";

/** The two bearer tokens of the local API. */
export interface LocalApiTokens {
  read: string;
  control: string;
}

/** 200 when the token grants `needed`, 401 without a known token, 403 with a read token on a control route. */
export type Verdict = 200 | 401 | 403;

const digest = (s: string) => createHash("sha256").update(s).digest();

/**
 * Checks `Authorization: Bearer <token>` against the two tokens (zeusd's read/control split).
 * Both sides are hashed so the comparison takes the same time whatever the token.
 *
 * @example
 * authorize("Bearer r3ad", { read: "r3ad", control: "c0ntrol" }, "control"); // 403
 */
export function authorize(header: string | undefined, tokens: LocalApiTokens, needed: Scope): Verdict {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "");
  if (!match) return 401;
  const given = digest(match[1]!);
  const isControl = timingSafeEqual(given, digest(tokens.control));
  const isRead = timingSafeEqual(given, digest(tokens.read));
  if (isControl) return 200;
  if (isRead) return needed === "read" ? 200 : 403;
  return 401;
}
