import { existsSync, readdirSync, readFileSync } from "node:fs";

/**
 * CPU time of child processes from /proc (Linux; elsewhere every function here answers null).
 * On a shared machine requests per second move with everyone else's load; the CPU a Worker's
 * workerd process spends per request moves much less, so the bench reports it beside the rates.
 */

const HAVE_PROC = existsSync("/proc/self/stat");

/** Fields of /proc/PID/stat after the command name (which may hold spaces). */
function statFields(pid: number): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return null;
  }
}

/** Every live descendant of `root` (children, grandchildren, ...), or null without /proc. */
export function descendants(root = process.pid): number[] | null {
  if (!HAVE_PROC) return null;
  const children = new Map<number, number[]>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const parent = Number(statFields(Number(entry))?.[1]);
    if (!Number.isFinite(parent)) continue;
    children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
  }
  const out: number[] = [];
  for (let queue = [root]; queue.length > 0; ) {
    const next = children.get(queue.pop()!) ?? [];
    out.push(...next);
    queue.push(...next);
  }
  return out;
}

/**
 * User + system CPU milliseconds the processes have used so far (fields 14 and 15 of stat, in
 * clock ticks: USER_HZ, which is 100 on Linux), or null.
 */
export function cpuMs(pids: readonly number[] | null): number | null {
  if (!pids || pids.length === 0) return null;
  let ticks = 0;
  for (const pid of pids) {
    const f = statFields(pid);
    if (!f) return null;
    ticks += Number(f[11]) + Number(f[12]);
  }
  return ticks * 10;
}

/**
 * CPU milliseconds the live threads of the processes have run, at nanosecond resolution (the
 * first field of /proc/PID/task/TID/schedstat), or null. Threads that have ended are not counted:
 * for short measurements of long-lived processes, where 10 ms ticks are too coarse.
 */
export function threadCpuMs(pids: readonly number[] | null): number | null {
  if (!HAVE_PROC || !pids || pids.length === 0) return null;
  let ns = 0;
  for (const pid of pids) {
    let tids: string[];
    try {
      tids = readdirSync(`/proc/${pid}/task`);
    } catch {
      return null;
    }
    for (const tid of tids) {
      try {
        ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]);
      } catch {
        // The thread ended between the listing and the read.
      }
    }
  }
  return ns / 1e6;
}
