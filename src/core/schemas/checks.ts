import type { z } from "zod";

/**
 * Adds one issue per repeated value, at the path of each repeat after the first. Shared by the
 * schemas' cross-field checks.
 */
export function reportDuplicates(ctx: z.RefinementCtx, values: readonly unknown[], pathOf: (index: number) => PropertyKey[], what: string): void {
  const seen = new Set<unknown>();
  values.forEach((v, i) => {
    if (seen.has(v)) ctx.addIssue({ code: "custom", message: `duplicate ${what} "${String(v)}"`, path: pathOf(i) });
    seen.add(v);
  });
}

/** Names listed in a message before "and N more". */
export const NAMES_LISTED = 8;

/** Distinct names for a message: the first NAMES_LISTED, each cut to 64 characters, then how many more. */
export function listNames(names: readonly string[]): string {
  const distinct = [...new Set(names)];
  const shown = distinct.slice(0, NAMES_LISTED).map((n) => n.slice(0, 64));
  return shown.join(", ") + (distinct.length > NAMES_LISTED ? ` and ${distinct.length - NAMES_LISTED} more` : "");
}
