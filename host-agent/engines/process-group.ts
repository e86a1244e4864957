import { sleep } from "../util/backoff.ts";
import { runningInGroup } from "../util/proc-stat.ts";

/** Sends `signal` to every process of group `pgid`; a group already gone is fine. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
  }
}

export interface EndGroupOptions {
  /** Between SIGTERM and SIGKILL. */
  graceMs: number;
  /** How often to look whether the group has gone. Default 100 ms. */
  pollMs?: number;
  /** How long to wait for the group to go after SIGKILL. Default 5 s. */
  killWaitMs?: number;
}

/**
 * Ends a process group that is not this process's child (an engine a previous agent run left):
 * SIGTERM to the group, SIGKILL to what is left after `graceMs`, each time waiting until /proc
 * shows no process of the group running. Returns whether it had to kill, and whether the group is gone.
 *
 * @example
 * await endProcessGroup(record.pid, { graceMs: 15_000 }); // { killed: false, gone: true }
 */
export async function endProcessGroup(pgid: number, o: EndGroupOptions): Promise<{ killed: boolean; gone: boolean }> {
  const pollMs = o.pollMs ?? 100;
  const goneWithin = async (ms: number) => {
    const deadline = Date.now() + ms;
    for (;;) {
      if (runningInGroup(pgid).length === 0) return true;
      if (Date.now() >= deadline) return false;
      await sleep(Math.min(pollMs, deadline - Date.now()));
    }
  };
  signalGroup(pgid, "SIGTERM");
  if (await goneWithin(o.graceMs)) return { killed: false, gone: true };
  signalGroup(pgid, "SIGKILL");
  return { killed: true, gone: await goneWithin(o.killWaitMs ?? 5000) };
}
