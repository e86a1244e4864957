import type { z } from "zod";
import type { CsvTable } from "./csv.ts";
import { dataErrorAt } from "./data-error.ts";

/**
 * Validates every row of a table with a zod schema over the named columns (cells as strings) and
 * returns the typed rows; the first bad row throws a DataError naming source, line and field.
 * All rows are checked before anything is returned, so a caller never sees a partial load.
 *
 * @example
 * const Row = z.object({ n: nonNegativeIntCell });
 * parseCsvRows(readCsv("n\n1\n2\n", "f.csv"), ["n"], Row); // [{ n: 1 }, { n: 2 }]
 */
export function parseCsvRows<T>(table: CsvTable, columns: readonly string[], schema: z.ZodType<T>): T[] {
  const indices = columns.map((name) => {
    const index = table.header.indexOf(name);
    if (index === -1) {
      throw dataErrorAt(table.source, table.headerLine, undefined, `missing column ${name} (header is ${table.header.join(",")})`);
    }
    return index;
  });
  return table.rows.map(({ line, fields }) => {
    const cells: Record<string, string> = {};
    columns.forEach((name, i) => (cells[name] = fields[indices[i]!]!));
    const result = schema.safeParse(cells);
    if (result.success) return result.data;
    const issue = result.error.issues[0]!;
    const field = issue.path.length > 0 ? String(issue.path[0]) : undefined;
    const got = field !== undefined && field in cells ? `, got ${JSON.stringify(cells[field])}` : "";
    throw dataErrorAt(table.source, line, field, issue.message + got);
  });
}
