import { closeSync, openSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { writeFileAtomic } from "../util/atomic-file.ts";
import { EngineKind, EngineLaunch } from "./engine.ts";
import { makeDirSync } from "../util/make-dir.ts";

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
 * files.readPids(); // { records: [record], unreadable: [] }
 */
export class EngineFiles {
  constructor(readonly dir: string) {
    makeDirSync(dir, 0o700);
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

  /** Every pid file: the valid records, and what can be read of the others (`unreadable`, left where they are). */
  readPids(): { records: EnginePidRecord[]; unreadable: UnreadablePidFile[] } {
    const records: EnginePidRecord[] = [];
    const unreadable: UnreadablePidFile[] = [];
    for (const name of readdirSync(this.dir).filter((n) => /^\d+\.json$/.test(n))) {
      const path = join(this.dir, name);
      const text = readText(path);
      const record = parseRecord(text);
      if (record && `${record.port}.json` === name) records.push(record);
      else unreadable.push({ path, port: Number.parseInt(name, 10), pid: wholeNumberField(text, "pid"), processStartTime: wholeNumberField(text, "processStartTime") });
    }
    return { records, unreadable };
  }

  /** Renames a pid file out of the way (`<port>.json.unreadable-<ms>`), where a later run will not read it again; returns the new path. */
  setAside(path: string): string {
    const aside = `${path}.unreadable-${Date.now()}`;
    renameSync(path, aside);
    return aside;
  }

  private pidPath(port: number): string {
    return join(this.dir, `${port}.json`);
  }
}

/**
 * A pid file that is not a whole record: cut short (a crash mid-write on a bad disk) or in another
 * format (an upgrade changed it). Its pid and start time, written first, are often still there.
 */
export interface UnreadablePidFile {
  path: string;
  /** From the file's name. */
  port: number;
  pid: number | undefined;
  processStartTime: number | undefined;
}

function readText(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return "";
  }
}

function parseRecord(text: string): EnginePidRecord | undefined {
  try {
    return EnginePidRecord.safeParse(JSON.parse(text)).data;
  } catch {
    return undefined;
  }
}

/** A whole number field of a record's text: one cut short inside the number (no `,` or `}` after it) does not count. */
function wholeNumberField(text: string, name: string): number | undefined {
  const match = new RegExp(`"${name}"\\s*:\\s*(\\d+)\\s*[,}]`).exec(text);
  return match ? Number(match[1]) : undefined;
}
