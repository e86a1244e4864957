import { existsSync, readFileSync } from "node:fs";
import { z } from "zod";
import { EpochMs } from "../../src/core/schemas/ids.ts";
import { SitePlanSlice } from "../protocol/plan-slice.ts";
import { writeFileAtomic } from "../util/atomic-file.ts";

/** What `plan.json` holds: the last plan slice the agent took up, where from, and when. */
export const StoredPlan = z.object({ source: z.enum(["edge", "local"]), savedAtMs: EpochMs, slice: SitePlanSlice });
export type StoredPlan = z.infer<typeof StoredPlan>;

/**
 * The last plan slice the agent took up, kept in its state dir (`plan.json`, written atomically) so
 * that an agent that starts again while the edge cannot be reached can apply it, and so adopt the
 * engines the plan runs rather than end them. Read back through its zod schema: a file that does
 * not parse is ignored, saying why.
 *
 * @example
 * const plans = new PlanStore("/var/lib/greenference-agent/plan.json", log);
 * plans.save(slice, "edge");
 * plans.load()?.slice.version; // slice.version
 */
export class PlanStore {
  constructor(
    readonly path: string,
    private readonly log: (message: string) => void,
  ) {}

  /** Keeps `slice`; a write that fails (a full disk) is logged, and the plan is applied all the same. */
  save(slice: SitePlanSlice, source: StoredPlan["source"]): void {
    try {
      writeFileAtomic(this.path, JSON.stringify({ source, savedAtMs: Date.now(), slice } satisfies StoredPlan));
    } catch (error) {
      this.log(`could not keep plan ${slice.version} in ${this.path} for a restart without the edge: ${(error as Error).message}`);
    }
  }

  /** The plan kept by the last save, or undefined when there is none or it cannot be read (logged). */
  load(): StoredPlan | undefined {
    if (!existsSync(this.path)) return undefined;
    let parsed: ReturnType<typeof StoredPlan.safeParse>;
    try {
      parsed = StoredPlan.safeParse(JSON.parse(readFileSync(this.path, "utf8")));
    } catch (error) {
      this.log(`ignoring the plan kept in ${this.path}: ${(error as Error).message}`);
      return undefined;
    }
    if (parsed.success) return parsed.data;
    this.log(`ignoring the plan kept in ${this.path}: ${z.prettifyError(parsed.error)}`);
    return undefined;
  }
}
