import { DataError, dataErrorAt } from "./data-error.ts";

/** One data row and the 1-based line of the file it came from. */
export interface CsvRow {
  line: number;
  fields: string[];
}

/** A CSV file split into a header and rows of raw strings; nothing is interpreted yet. */
export interface CsvTable {
  source: string;
  /** 1-based line of the header. */
  headerLine: number;
  header: string[];
  rows: CsvRow[];
}

/**
 * Splits CSV text: the first non-empty line is the header (names trimmed), blank lines are
 * skipped, CR before LF is dropped, and every row must have as many fields as the header.
 * Double-quoted fields may contain commas and `""` for a quote; a quoted field cannot span lines.
 *
 * @example
 * readCsv("a,b\r\n1,2\r\n", "x.csv"); // { source: "x.csv", headerLine: 1, header: ["a","b"], rows: [{ line: 2, fields: ["1","2"] }] }
 */
export function readCsv(text: string, source: string): CsvTable {
  const lines = text.split("\n");
  let header: string[] | undefined;
  let headerLine = 0;
  const rows: CsvRow[] = [];
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!;
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (line.trim() === "") continue;
    const fields = splitCsvLine(line, source, i + 1);
    if (!header) {
      header = fields.map((f) => f.trim());
      headerLine = i + 1;
      continue;
    }
    if (fields.length !== header.length) {
      throw dataErrorAt(source, i + 1, undefined, `expected ${header.length} fields (${header.join(",")}), got ${fields.length}`);
    }
    rows.push({ line: i + 1, fields });
  }
  if (!header) throw new DataError(`${source}: empty file, expected a CSV header line`);
  return { source, headerLine, header, rows };
}

function splitCsvLine(line: string, source: string, lineNo: number): string[] {
  if (!line.includes('"')) return line.split(",");
  const fields: string[] = [];
  let i = 0;
  for (;;) {
    if (line[i] === '"') {
      let value = "";
      i++;
      for (;;) {
        if (i >= line.length) throw dataErrorAt(source, lineNo, undefined, "unterminated quoted field");
        if (line[i] === '"') {
          if (line[i + 1] === '"') {
            value += '"';
            i += 2;
            continue;
          }
          i++;
          break;
        }
        value += line[i];
        i++;
      }
      if (i < line.length && line[i] !== ",") throw dataErrorAt(source, lineNo, undefined, `unexpected character after a quoted field at column ${i + 1}`);
      fields.push(value);
    } else {
      const end = line.indexOf(",", i);
      fields.push(line.slice(i, end === -1 ? line.length : end));
      i = end === -1 ? line.length : end;
    }
    if (i >= line.length) return fields;
    i++; // skip the comma
    if (i === line.length) {
      fields.push("");
      return fields;
    }
  }
}
