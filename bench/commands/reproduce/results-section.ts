/** Markers around a generated section of docs/RESULTS.md that other commands keep. */
function markers(name: string): { start: string; end: string } {
  return { start: `<!-- ${name}:start -->`, end: `<!-- ${name}:end -->` };
}

/** The marked section `name` of a Markdown text, markers included (undefined when absent). */
export function sectionOf(text: string, name: string): string | undefined {
  const { start, end } = markers(name);
  const i = text.indexOf(start);
  const j = text.indexOf(end, i);
  return i >= 0 && j > i ? text.slice(i, j + end.length) : undefined;
}

/**
 * `text` with its marked section `name` replaced by `body` (appended at the end when absent).
 *
 * @example
 * withSection("# R\n", "sweep", "## Sweep"); // "# R\n\n<!-- sweep:start -->\n## Sweep\n<!-- sweep:end -->\n"
 */
export function withSection(text: string, name: string, body: string): string {
  const { start, end } = markers(name);
  const section = `${start}\n${body}\n${end}`;
  const old = sectionOf(text, name);
  return old ? text.replace(old, section) : `${text.trimEnd()}\n\n${section}\n`;
}
