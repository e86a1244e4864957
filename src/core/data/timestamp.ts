import { z } from "zod";

/**
 * An instant split into whole epoch seconds and a fraction, so that sub-microsecond digits
 * survive: a double holding epoch milliseconds in 2023 only resolves about 0.24 microseconds.
 */
export interface SplitInstant {
  epochS: number;
  fracS: number;
}

const PATTERN = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:?\d{2})?$/;

/**
 * Parses `YYYY-MM-DD hh:mm:ss[.f]` with 0 to 9 fractional digits and an optional `Z` or `+hh:mm`
 * offset; without an offset the time is UTC. Parsed by hand because `Date` parsing of 7-digit
 * fractions and of space-separated dates differs between engines. Returns undefined if invalid.
 *
 * @example
 * parseTimestamp("2023-11-16 18:15:46.68"); // { epochS: 1700158546, fracS: 0.68 }
 */
export function parseTimestamp(text: string): SplitInstant | undefined {
  const m = PATTERN.exec(text);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  const offsetS = parseOffsetS(m[8]);
  if (offsetS === undefined) return undefined;
  const epochS = Date.UTC(year, month - 1, day, hour, minute, second) / 1000 - offsetS;
  return { epochS, fracS: m[7] ? Number(`0.${m[7]}`) : 0 };
}

/** Milliseconds since the epoch of a split instant (fractional milliseconds kept). */
export function instantToEpochMs(t: SplitInstant): number {
  return t.epochS * 1000 + t.fracS * 1000;
}

/** Seconds from `a` to `b`, exact to the fraction's precision. */
export function secondsBetween(a: SplitInstant, b: SplitInstant): number {
  return b.epochS - a.epochS + (b.fracS - a.fracS);
}

/** Orders instants; negative when `a` is earlier. */
export function compareInstants(a: SplitInstant, b: SplitInstant): number {
  return a.epochS - b.epochS || a.fracS - b.fracS;
}

/** A CSV cell holding a timestamp (see parseTimestamp). */
export const timestampCell = z
  .string()
  .trim()
  .transform((s, ctx) => {
    const t = parseTimestamp(s);
    if (!t) ctx.addIssue("expected a timestamp like 2023-11-16 18:15:46.68 (UTC unless an offset is given)");
    return t ?? { epochS: 0, fracS: 0 };
  });

function parseOffsetS(text: string | undefined): number | undefined {
  if (!text || text === "Z") return 0;
  const digits = text.slice(1).replace(":", "");
  const hours = Number(digits.slice(0, 2));
  const minutes = Number(digits.slice(2));
  if (hours > 23 || minutes > 59) return undefined;
  return (text[0] === "-" ? -1 : 1) * (hours * 3600 + minutes * 60);
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}
