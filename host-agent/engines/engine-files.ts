import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { writeFileAtomic } from "../util/atomic-file.ts";
import { EngineKind, EngineLaunch } from "./engine.ts";

/**
 * What the agent writes down about each engine process it starts, so a later run can find it
 * after a crash: who it is (pid and the process's start time, which together name one process even
 * when the pid is reused), what it runs (launch, argv) and where it listens.
 */
export const EnginePidRecord = z.object({
  pid: z.number().int().positive(),
  /** Start time from /proc/<pid>/stat, clock ticks after boot; null where /proc is missing. */
  processStartTime: z.number().int().nonnegative().nullable(),
  startedAtMs: z.number(),
  kind: EngineKind,
  launch: EngineLaunch,
  host: z.string(),
  port: z.number().int().min(1).max(65535),
  argv: z.array(z.string()).min(1),
});
export type EnginePidRecord = z.infer<typeof EnginePidRecord>;

/**
 * The engines' folder in the agent's state dir: per engine port a pid file `<port>.json` (written
 * atomically when the process starts, removed when it has ended) and the engine's output
 * `<port>.log` (started afresh by each engine on that port, kept after it ends).
 *
 * @example
 * const files = new EngineFiles("/var/lib/greenference-agent/engines");
 * files.writePid(record);
 * files.readPids(); // { records: [record], bad: [] }
 */
export class EngineFiles {
  constructor(readonly dir: string) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  }

  logPath(port: number): string {
    return join(this.dir, `${port}.log`);
  }

  /** Empties the port's log and opens it for appending (O_APPEND, so `logrotate copytruncate` works). */
  openFreshLog(port: number): number {
    writeFileSync(this.logPath(port), "", { mode: 0o600 });
    return openSync(this.logPath(port), "a");
  }

  closeLog(fd: number): void {
    closeSync(fd);
  }

  writePid(record: EnginePidRecord): void {
    writeFileAtomic(this.pidPath(record.port), JSON.stringify(record));
  }

  removePid(port: number): void {
    rmSync(this.pidPath(port), { force: true });
  }

  /** Every pid file; files that are not a valid record are listed in `bad` (and removed). */
  readPids(): { records: EnginePidRecord[]; bad: string[] } {
    const records: EnginePidRecord[] = [];
    const bad: string[] = [];
    for (const name of readdirSync(this.dir).filter((n) => /^\d+\.json$/.test(n))) {
      const path = join(this.dir, name);
      let parsed;
      try {
        parsed = EnginePidRecord.safeParse(JSON.parse(readFileSync(path, "utf8")));
      } catch {
        parsed = undefined;
      }
      if (parsed?.success && `${parsed.data.port}.json` === name) records.push(parsed.data);
      else {
        bad.push(path);
        rmSync(path, { force: true });
      }
    }
    return { records, bad };
  }

  private pidPath(port: number): string {
    return join(this.dir, `${port}.json`);
  }
}
