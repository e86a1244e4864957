/**
 * Formats rows as a Markdown table with padded columns, readable in a terminal and in docs.
 *
 * @example
 * markdownTable(["class", "MHz"], [["SS", "1200"]]);
 * // | class | MHz  |
 * // | ----- | ---- |
 * // | SS    | 1200 |
 */
export function markdownTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: readonly string[]) => `| ${widths.map((w, i) => (cells[i] ?? "").padEnd(w)).join(" | ")} |`;
  return [line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n");
}
