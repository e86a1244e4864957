/**
 * A data file (trace, grid series, profile table) that cannot be used as it is. The message names
 * the source, and where it can the 1-based line and the field, so a user can fix the file.
 */
export class DataError extends Error {
  override name = "DataError";
}

/**
 * Builds the error for one bad value.
 *
 * @example
 * dataErrorAt("trace.csv", 17, "ContextTokens", 'expected a non-negative integer, got "abc"');
 * // trace.csv line 17: field ContextTokens: expected a non-negative integer, got "abc"
 */
export function dataErrorAt(source: string, line: number, field: string | undefined, message: string): DataError {
  return new DataError(`${source} line ${line}: ${field === undefined ? "" : `field ${field}: `}${message}`);
}
