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
