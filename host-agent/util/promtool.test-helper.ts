import { spawnSync } from "node:child_process";

/**
 * Runs `promtool check metrics` (Prometheus's own linter) on an exposition. Undefined when promtool is
 * not installed, so a test can skip with a message; CI installs it (Debian's `prometheus` package, .ci/run).
 *
 * @example
 * const check = promtoolCheck(text);
 * if (check) expect(check).toEqual({ status: 0, output: "" });
 */
export function promtoolCheck(text: string): { status: number | null; output: string } | undefined {
  const run = spawnSync(process.env.PROMTOOL ?? "promtool", ["check", "metrics"], { input: text, encoding: "utf8", timeout: 30_000 });
  if ((run.error as NodeJS.ErrnoException | undefined)?.code === "ENOENT") return undefined;
  return { status: run.status, output: `${run.stdout}${run.stderr}`.trim() };
}

/** Why a promtool check was skipped, for `it.skipIf`'s neighbours to print. */
export const PROMTOOL_MISSING = "promtool is not installed (apt-get install prometheus); the metrics lint was skipped";
