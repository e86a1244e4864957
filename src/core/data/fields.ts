import { z } from "zod";

/**
 * Zod codecs for CSV cells (strings in, typed values out). Their messages complete the sentence
 * "field X: ..., got "cell"" built by parseCsvRows.
 */

const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** A non-negative integer such as a token count. */
export const nonNegativeIntCell = z
  .string()
  .trim()
  .regex(/^\d+$/, "expected a non-negative integer")
  .transform(Number)
  .refine(Number.isSafeInteger, "expected a non-negative integer of safe size");

/** A finite decimal number (sign and exponent allowed). */
export const numberCell = z
  .string()
  .trim()
  .regex(DECIMAL, "expected a number")
  .transform(Number)
  .refine(Number.isFinite, "expected a finite number");

/** A finite non-negative decimal number. */
export const nonNegativeNumberCell = numberCell.refine((x) => x >= 0, "expected a non-negative number");

/** A number, or `null` for an empty cell (gaps in a series). */
export const optionalNumberCell = z
  .string()
  .trim()
  .refine((s) => s === "" || DECIMAL.test(s), "expected a number or an empty cell")
  .transform((s) => (s === "" ? null : Number(s)))
  .refine((x) => x === null || Number.isFinite(x), "expected a finite number");
