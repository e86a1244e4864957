import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { writeFileAtomic } from "../util/atomic-file.ts";
import { isRunning, readProcStat } from "../util/proc-stat.ts";
import { makeDirSync } from "../util/make-dir.ts";

/** Where a real site's agent keeps its state unless `stateDir` says otherwise. */
export const DEFAULT_STATE_DIR = "/var/lib/greenference-agent";

const AgentLock = z.object({ pid: z.number().int().positive(), startTime: z.number().int().nullable(), site: z.string() });

/** The state dir could not be used; the message says why and what to change. */
export class StateDirError extends Error {
  override readonly name = "StateDirError";
}

/** The agent's state dir, held by this process until `release`. */
export interface StateDir {
  dir: string;
  /** A fresh temp dir (simulated site), removed on release. */
  temporary: boolean;
  /** Lets go of the dir at a clean stop (a temporary one is removed). */
  release(): void;
}

/**
 * Opens the agent's state dir: `configured`, or else a fresh temp dir when `temporary` (a simulated
 * site, whose GPUs and engines end with the agent), or else /var/lib/greenference-agent. Takes
 * the dir's lock file `agent.lock` (pid and process start time): a second agent on the same dir
 * would end the first one's engines and restore GPUs under it, so it is refused while the first runs.
 *
 * @example
 * const state = openStateDir({ configured: undefined, temporary: false, site: "wind-a" }); // /var/lib/greenference-agent
 * state.release();
 */
export function openStateDir(o: { configured: string | undefined; temporary: boolean; site: string }): StateDir {
  const temporary = o.configured === undefined && o.temporary;
  if (temporary) removeDeadTempDirs(o.site);
  const dir = o.configured ?? (temporary ? mkdtempSync(join(tmpdir(), `${TEMP_PREFIX}${o.site}-`)) : DEFAULT_STATE_DIR);
  try {
    makeDirSync(dir, 0o700);
  } catch (error) {
    throw new StateDirError(`cannot create the agent's state dir ${dir} (stateDir, --state-dir): ${(error as Error).message}`);
  }
  const lockPath = join(dir, "agent.lock");
  const holder = readLock(lockPath);
  if (holder && holder.startTime !== null && isRunning(holder.pid, holder.startTime)) {
    throw new StateDirError(`another agent (pid ${holder.pid}, site ${holder.site}) is running with the state dir ${dir}; stop it, or give this one its own --state-dir`);
  }
  try {
    writeFileAtomic(lockPath, JSON.stringify({ pid: process.pid, startTime: readProcStat(process.pid)?.startTime ?? null, site: o.site }));
  } catch (error) {
    throw new StateDirError(`cannot write to the agent's state dir ${dir} (stateDir, --state-dir): ${(error as Error).message}`);
  }
  return {
    dir,
    temporary,
    release: () => (temporary ? rmSync(dir, { recursive: true, force: true }) : rmSync(lockPath, { force: true })),
  };
}

const TEMP_PREFIX = "greenference-agent-";

/**
 * Removes the temp dirs of the site's simulated agents that died without their clean stop (killed):
 * each holds the lock of a process that no longer runs, and nothing else would ever remove it. A
 * dir without a lock yet (another agent is creating it) or whose holder runs is left alone.
 */
function removeDeadTempDirs(site: string): void {
  const prefix = `${TEMP_PREFIX}${site}-`;
  let names: string[];
  try {
    names = readdirSync(tmpdir()).filter((n) => n.startsWith(prefix));
  } catch {
    return;
  }
  for (const name of names) {
    const dir = join(tmpdir(), name);
    const holder = readLock(join(dir, "agent.lock"));
    if (holder && holder.site === site && holder.startTime !== null && !isRunning(holder.pid, holder.startTime)) rmSync(dir, { recursive: true, force: true });
  }
}

function readLock(path: string): z.infer<typeof AgentLock> | null {
  try {
    const parsed = AgentLock.safeParse(JSON.parse(readFileSync(path, "utf8")));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}
