import { readProcStat, runningInGroup } from "../util/proc-stat.ts";
import type { EngineFiles, EnginePidRecord } from "./engine-files.ts";
import { launchKey } from "./engine.ts";
import { endProcessGroup } from "./process-group.ts";

export interface OrphanEnginesOptions {
  files: EngineFiles;
  /** Between SIGTERM and SIGKILL when ending one. */
  graceMs: number;
  log: (message: string) => void;
  pollMs?: number;
}

/**
 * Engines an earlier agent run started and never stopped (it crashed or was killed), found through
 * the pid files in the state dir. `recover` sorts them: a pid file whose process has ended, or whose
 * pid now names another process (a different start time), is removed; workers left of an engine
 * whose leader has ended are ended at once; an engine still running waits here until a launch of
 * the plan `claim`s it (it is adopted), until an engine is to start on its GPUs
 * (`endOverlapping`), or until `endAll` (at the end of the adoption window, or when the agent stops).
 * Every launch on the GPUs of one being ended waits until it has gone, whoever began ending it.
 *
 * @example
 * const orphans = await OrphanEngines.recover({ files, graceMs: 15_000, log });
 * orphans.claim((r) => r.launch.instanceId === "llama"); // the record, now the caller's to adopt
 * await orphans.endAll();
 */
export class OrphanEngines {
  private readonly waiting = new Map<number, EnginePidRecord>();
  /** Orphans being ended, by port, each until its process group has gone. */
  private readonly ending = new Map<number, { record: EnginePidRecord; gone: Promise<void> }>();
  private timer: NodeJS.Timeout | undefined;

  private constructor(private readonly o: OrphanEnginesOptions) {}

  static async recover(o: OrphanEnginesOptions): Promise<OrphanEngines> {
    const orphans = new OrphanEngines(o);
    const { records, bad } = o.files.readPids();
    for (const path of bad) o.log(`removed ${path}: not an engine pid file`);
    for (const record of records) {
      const leader = readProcStat(record.pid);
      const sameProcess = leader !== null && record.processStartTime !== null && leader.startTime === record.processStartTime;
      if (sameProcess && leader.state !== "Z" && leader.state !== "X") {
        o.log(`found ${orphans.describe(record)} still running from an earlier run`);
        orphans.waiting.set(record.port, record);
      } else if (record.processStartTime !== null && (sameProcess || leader?.pgrp !== record.pid) && runningInGroup(record.pid).length > 0) {
        // The leader has ended but processes of its group (TP workers) still run and may hold GPU memory.
        await orphans.end(record, "its leader has ended; ending the rest of its process group");
      } else {
        if (record.processStartTime === null) o.log(`cannot tell whether pid ${record.pid} is still ${orphans.describe(record)} (no /proc); left alone`);
        o.files.removePid(record.port);
      }
    }
    return orphans;
  }

  /** Ports the waiting orphans, and those being ended, listen on: no new engine may take them. */
  holds(port: number): boolean {
    return this.waiting.has(port) || this.ending.has(port);
  }

  get size(): number {
    return this.waiting.size;
  }

  /** Takes the first waiting orphan that `matches` (and still runs) out of the set, for the caller to adopt. */
  claim(matches: (record: EnginePidRecord) => boolean): EnginePidRecord | undefined {
    for (const record of this.waiting.values()) {
      if (!matches(record)) continue;
      this.waiting.delete(record.port);
      return record;
    }
    return undefined;
  }

  /** Ends the orphans on any of `gpus`, before an engine starts there; resolves once every one there has gone. */
  async endOverlapping(gpus: readonly number[], why = "its GPUs are wanted by a launch it does not match"): Promise<void> {
    await this.endWhere((r) => r.launch.gpus.some((g) => gpus.includes(g)), why);
  }

  /** Ends every orphan still waiting, `afterMs` from now (0: now). */
  endAllAfter(afterMs: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.endAll(`not adopted within ${afterMs} ms`), afterMs);
    this.timer.unref();
  }

  async endAll(why = "the agent is stopping"): Promise<void> {
    clearTimeout(this.timer);
    await this.endWhere(() => true, why);
  }

  /**
   * Starts ending the waiting orphans `which` selects, and resolves once all it selects have gone,
   * those some other caller is already ending included: a caller that finds an orphan on its GPUs
   * being ended must wait for it as well as the caller that began it.
   */
  private async endWhere(which: (record: EnginePidRecord) => boolean, why: string): Promise<void> {
    for (const record of [...this.waiting.values()].filter(which)) {
      this.waiting.delete(record.port);
      const gone = this.end(record, why).finally(() => this.ending.delete(record.port));
      this.ending.set(record.port, { record, gone });
    }
    await Promise.all([...this.ending.values()].filter((e) => which(e.record)).map((e) => e.gone));
  }

  private async end(record: EnginePidRecord, why: string): Promise<void> {
    const { killed, gone } = await endProcessGroup(record.pid, { graceMs: this.o.graceMs, pollMs: this.o.pollMs });
    this.o.log(`ended ${this.describe(record)} left by an earlier run (${why}): ${killed ? "SIGKILL after SIGTERM" : "SIGTERM"}${gone ? "" : "; some of its processes did not go"}`);
    this.o.files.removePid(record.port);
  }

  private describe(r: EnginePidRecord): string {
    return `${r.kind} engine ${launchKey(r.launch)} (pid ${r.pid}, port ${r.port}, GPUs ${r.launch.gpus.join(",")})`;
  }
}
