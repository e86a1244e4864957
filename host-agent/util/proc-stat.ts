import { readdirSync, readFileSync } from "node:fs";

/** A process as /proc/<pid>/stat shows it. */
export interface ProcStat {
  /** One letter: R running, S sleeping, ..., Z zombie, X dead. */
  state: string;
  /** Process group id. */
  pgrp: number;
  /** When the process started, in clock ticks after boot: with the pid, it names one process. */
  startTime: number;
}

/**
 * Reads /proc/<pid>/stat (Linux), or null when there is no such process (or no /proc). The
 * command name in parentheses may hold spaces and parentheses, so fields are counted from the
 * last ")".
 *
 * @example
 * readProcStat(process.pid); // { state: "R", pgrp: 4711, startTime: 123456 }
 */
export function readProcStat(pid: number): ProcStat | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return null;
  }
  // After ") ": field 3 (state) is at 0, field 5 (pgrp) at 2, field 22 (starttime) at 19.
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  const startTime = Number(fields[19]);
  const pgrp = Number(fields[2]);
  if (!fields[0] || !Number.isInteger(startTime) || !Number.isInteger(pgrp)) return null;
  return { state: fields[0], pgrp, startTime };
}

/** Whether /proc can tell processes apart by start time on this host. */
export const procAvailable = (): boolean => readProcStat(process.pid) !== null;

/**
 * Whether the process `pid` that started at `startTime` still runs: a zombie waiting for its
 * parent to reap it has ended, and a different start time means the pid was reused.
 */
export function isRunning(pid: number, startTime: number): boolean {
  const stat = readProcStat(pid);
  return stat !== null && stat.startTime === startTime && stat.state !== "Z" && stat.state !== "X";
}

/** Pids of the processes of group `pgid` that have not ended (zombies do not count), from /proc. */
export function runningInGroup(pgid: number): number[] {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return [];
  }
  return entries
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((pid) => {
      const stat = readProcStat(pid);
      return stat !== null && stat.pgrp === pgid && stat.state !== "Z" && stat.state !== "X";
    });
}
