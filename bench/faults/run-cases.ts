import type { BadInputCase } from "./bad-input-cases.ts";

/** One call the runners make: a Request-like description sent to the system under test. */
export type Send = (c: { method: string; path: string; headers: Record<string, string>; body?: string | Uint8Array }) => Promise<Response>;
/** A text that changes when the state a refused request must not touch has changed. */
export type Snapshot = () => Promise<string>;

export interface CaseVerdict {
  name: string;
  expected: BadInputCase["expect"];
  got: ErrorShape;
  stateChanged: boolean;
  correct: boolean;
}

export interface CaseRun {
  tried: number;
  correct: number;
  verdicts: CaseVerdict[];
}

/** The largest error answer a case may get: what echoes the input (a path, a name) is cut short. */
export const MAX_ERROR_BYTES = 4096;

export interface ErrorShape {
  status: number;
  code: string | null;
  hasMessage: boolean;
  bytes: number;
}

/** The status, error code, whether the body is the OpenAI error shape with a message, and its size. */
export async function errorShape(r: Response): Promise<ErrorShape> {
  const text = await r.text();
  const bytes = new TextEncoder().encode(text).length;
  try {
    const error = (JSON.parse(text) as { error?: { message?: unknown; code?: unknown } }).error;
    return { status: r.status, code: typeof error?.code === "string" ? error.code : null, hasMessage: typeof error?.message === "string" && error.message.length > 0, bytes };
  } catch {
    return { status: r.status, code: null, hasMessage: false, bytes };
  }
}

/**
 * Sends every case and checks its status, its code, that the answer is an OpenAI error with a
 * message of at most MAX_ERROR_BYTES, and that the state snapshot is the same after it as before. `beforeCase` runs ahead of
 * each case's first snapshot (a test keeps its sites alive with it).
 */
export async function runBadInputCases(cases: BadInputCase[], send: Send, snapshot: Snapshot, beforeCase?: () => Promise<unknown>): Promise<CaseRun> {
  const verdicts: CaseVerdict[] = [];
  for (const c of cases) {
    await beforeCase?.();
    const before = await snapshot();
    const got = await send(c).then(errorShape, (e: unknown) => ({ status: 0, code: `no answer: ${e instanceof Error ? e.message : String(e)}`, hasMessage: false, bytes: 0 }));
    const stateChanged = (await snapshot()) !== before;
    const correct = got.status === c.expect.status && got.code === c.expect.code && got.hasMessage && got.bytes <= MAX_ERROR_BYTES && !stateChanged;
    verdicts.push({ name: c.name, expected: c.expect, got, stateChanged, correct });
  }
  return { tried: verdicts.length, correct: verdicts.filter((v) => v.correct).length, verdicts };
}
