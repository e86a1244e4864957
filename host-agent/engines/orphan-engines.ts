import { readProcStat, runningInGroup } from "../util/proc-stat.ts";
import type { EngineFiles, EnginePidRecord, UnreadablePidFile } from "./engine-files.ts";
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
 * whose leader has ended are ended at once, as is an engine whose pid file cannot be read whole
 * but still gives its pid and start time (a pid file that does not even give those is set aside,
 * with a warning); an engine still running waits here until a launch of
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
  /** Ports of pid files that named no process that can be told apart: an engine may still listen there. */
  private readonly setAside = new Set<number>();
  private timer: NodeJS.Timeout | undefined;

  private constructor(private readonly o: OrphanEnginesOptions) {}

  static async recover(o: OrphanEnginesOptions): Promise<OrphanEngines> {
    const orphans = new OrphanEngines(o);
    const { records, unreadable } = o.files.readPids();
    for (const file of unreadable) await orphans.recoverUnreadable(file);
    for (const record of records) {
      const left = leftOf(record.pid, record.processStartTime);
      if (left === "running") {
        o.log(`found ${orphans.describe(record)} still running from an earlier run`);
        orphans.waiting.set(record.port, record);
      } else if (left === "workers") {
        await orphans.end(record, WORKERS_LEFT);
      } else {
        if (record.processStartTime === null) o.log(`cannot tell whether pid ${record.pid} is still ${orphans.describe(record)} (no /proc); left alone`);
        o.files.removePid(record.port);
      }
    }
    return orphans;
  }

  /** Ports the waiting orphans, those being ended, and those of pid files set aside listen on: no new engine may take them. */
  holds(port: number): boolean {
    return this.waiting.has(port) || this.ending.has(port) || this.setAside.has(port);
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
    await this.endGroup(record.pid, record.port, this.describe(record), why);
  }

  private async endGroup(pid: number, port: number, what: string, why: string): Promise<void> {
    const { killed, gone } = await endProcessGroup(pid, { graceMs: this.o.graceMs, pollMs: this.o.pollMs });
    this.o.log(`ended ${what} left by an earlier run (${why}): ${killed ? "SIGKILL after SIGTERM" : "SIGTERM"}${gone ? "" : "; some of its processes did not go"}`);
    this.o.files.removePid(port);
  }

  /**
   * A pid file that is not a whole record may still name a running engine. With its pid and start
   * time, that process (never another that got its pid) is ended at once, as it cannot be adopted
   * and its GPUs are unknown; without them, the file is set aside and the port held, with a warning.
   */
  private async recoverUnreadable(file: UnreadablePidFile): Promise<void> {
    const { path, port, pid, processStartTime } = file;
    if (pid === undefined || processStartTime === undefined) {
      const aside = this.o.files.setAside(path);
      this.setAside.add(port);
      this.o.log(`warning: ${path} is not an engine pid file this agent can read, and gives no pid and start time to find its engine by; kept as ${aside}. An engine it named may still run unseen, holding GPUs and port ${port}: find it and end it`);
      return;
    }
    const left = leftOf(pid, processStartTime);
    const what = `the engine of unreadable pid file ${path} (pid ${pid}, port ${port})`;
    if (left === "running") await this.endGroup(pid, port, what, "its pid file cannot be read whole, so it cannot be adopted");
    else if (left === "workers") await this.endGroup(pid, port, what, WORKERS_LEFT);
    else {
      this.o.log(`removed unreadable pid file ${path}: pid ${pid} no longer runs the process it named`);
      this.o.files.removePid(port);
    }
  }

  private describe(r: EnginePidRecord): string {
    return `${r.kind} engine ${launchKey(r.launch)} (pid ${r.pid}, port ${r.port}, GPUs ${r.launch.gpus.join(",")})`;
  }
}

const WORKERS_LEFT = "its leader has ended; ending the rest of its process group";

/**
 * What is left of an engine process `pid` that started at `startTime`: still running, only
 * workers of its process group (TP workers, which may hold GPU memory), or nothing. A pid that now
 * names another process (another start time) is not it; without a start time (no /proc) nothing
 * can be told, and it counts as gone.
 */
function leftOf(pid: number, startTime: number | null): "running" | "workers" | "gone" {
  const leader = readProcStat(pid);
  const sameProcess = leader !== null && startTime !== null && leader.startTime === startTime;
  if (sameProcess && leader.state !== "Z" && leader.state !== "X") return "running";
  if (startTime !== null && (sameProcess || leader?.pgrp !== pid) && runningInGroup(pid).length > 0) return "workers";
  return "gone";
}
