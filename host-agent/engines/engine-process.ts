import { spawn } from "node:child_process";
import { sleep } from "../util/backoff.ts";
import { isRunning, readProcStat } from "../util/proc-stat.ts";
import { signalGroup } from "./process-group.ts";

/** An engine's OS process, started by this agent or adopted from an earlier run. */
export interface EngineProcess {
  /** Undefined when the command could not be started at all. */
  readonly pid: number | undefined;
  /** Start time from /proc/<pid>/stat (with the pid, it names this process); null without /proc. */
  readonly startTime: number | null;
  /** Resolves, with why, once the process has ended. */
  readonly exited: Promise<string>;
  readonly hasExited: boolean;
  /** Signals the process's group: the engine and the workers it spawned for tensor parallelism. */
  signal(signal: NodeJS.Signals): void;
}

/**
 * Starts `argv` as the leader of a new process group, its stdout and stderr going to `logFd` (a
 * file, not a pipe: the engine can go on writing if the agent dies, and a later run can read the
 * output). When the engine ends, whatever is left of its group (TP workers) is killed, so nothing
 * holds its GPUs.
 */
export function spawnEngineProcess(argv: readonly string[], env: NodeJS.ProcessEnv, logFd: number): EngineProcess {
  const child = spawn(argv[0]!, argv.slice(1), { env, stdio: ["ignore", logFd, logFd], detached: true });
  const pid = child.pid;
  let hasExited = false;
  const exited = new Promise<string>((resolve) => {
    let reason: string | undefined;
    const done = () => {
      hasExited = true;
      resolve(reason!);
    };
    child.once("error", (error) => {
      reason ??= `could not start '${argv[0]}': ${error.message}`;
      done();
    });
    child.once("exit", (code, signal) => {
      reason ??= signal ? `killed by ${signal}` : `exited with status ${code}`;
      try {
        if (pid !== undefined) signalGroup(pid, "SIGKILL");
      } catch {
        // a group this process may not signal is not the engine's
      }
      done();
    });
  });
  return {
    pid,
    startTime: pid === undefined ? null : (readProcStat(pid)?.startTime ?? null),
    exited,
    get hasExited() {
      return hasExited;
    },
    signal(signal) {
      if (pid === undefined || hasExited) return;
      try {
        signalGroup(pid, signal);
      } catch {
        child.kill(signal);
      }
    },
  };
}

/**
 * An engine process an earlier agent run started, found through its pid file: not this process's
 * child, so its end is seen by polling /proc every `pollMs` (a zombie counts as ended, a reused pid
 * does not count as it).
 */
export function adoptEngineProcess(pid: number, startTime: number, pollMs: number): EngineProcess {
  let hasExited = false;
  const exited = (async () => {
    while (isRunning(pid, startTime)) await sleep(pollMs);
    hasExited = true;
    return "ended (adopted from an earlier agent run, so its exit status is unknown)";
  })();
  return {
    pid,
    startTime,
    exited,
    get hasExited() {
      return hasExited;
    },
    signal(signal) {
      if (!hasExited && isRunning(pid, startTime)) signalGroup(pid, signal);
    },
  };
}
