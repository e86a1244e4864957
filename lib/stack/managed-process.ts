import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";

/** Every managed process still running, so an exiting parent can take them down with it. */
const running = new Set<ManagedProcess>();
process.once("exit", () => {
  for (const p of running) p.killNow();
});

export interface ManagedProcessOptions {
  name: string;
  command: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Each output line, stdout and stderr alike. */
  onLine?: (line: string, stream: "stdout" | "stderr") => void;
}

/**
 * A child process in its own process group (so its children, e.g. workerd under wrangler, stop
 * with it), its output read line by line, and a stop that escalates from SIGTERM to SIGKILL.
 *
 * @example
 * const p = ManagedProcess.start({ name: "edge", command: "npx", args: ["wrangler", "dev"] });
 * await p.waitForLine(/Ready on/, 60_000);
 * await p.stop();
 */
export class ManagedProcess {
  readonly child: ChildProcess;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private readonly lines: string[] = [];
  private readonly waiters = new Set<(line: string) => void>();

  private constructor(readonly options: ManagedProcessOptions) {
    this.child = spawn(options.command, options.args, { cwd: options.cwd, env: options.env ?? process.env, stdio: ["ignore", "pipe", "pipe"], detached: true });
    running.add(this);
    this.exited = new Promise((resolve) => {
      this.child.once("exit", (code, signal) => {
        running.delete(this);
        resolve({ code, signal });
      });
      this.child.once("error", (error) => {
        running.delete(this);
        this.record(`${options.name}: ${error.message}`, "stderr");
        resolve({ code: -1, signal: null });
      });
    });
    for (const stream of ["stdout", "stderr"] as const) {
      createInterface({ input: this.child[stream]! }).on("line", (line) => this.record(line, stream));
    }
  }

  static start(options: ManagedProcessOptions): ManagedProcess {
    return new ManagedProcess(options);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get alive(): boolean {
    return running.has(this);
  }

  /** The last `n` output lines, for error messages. */
  tail(n = 20): string {
    return this.lines.slice(-n).join("\n");
  }

  /** Resolves with the first line (already seen or new) matching `pattern`; rejects on exit or timeout. */
  waitForLine(pattern: RegExp, timeoutMs: number): Promise<string> {
    const seen = this.lines.find((l) => pattern.test(l));
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(waiter);
      };
      const waiter = (line: string) => {
        if (!pattern.test(line)) return;
        done();
        resolve(line);
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`${this.options.name}: no line matching ${pattern} within ${timeoutMs} ms; last output:\n${this.tail()}`));
      }, timeoutMs);
      this.waiters.add(waiter);
      void this.exited.then(({ code, signal }) => {
        if (!this.waiters.has(waiter)) return;
        done();
        reject(new Error(`${this.options.name} exited (${signal ?? `code ${code}`}) before printing ${pattern}; last output:\n${this.tail()}`));
      });
    });
  }

  /** SIGTERM to the group, SIGKILL after `graceMs`; resolves once the process has exited. */
  async stop(graceMs = 5_000): Promise<void> {
    if (!this.alive) return;
    this.signal("SIGTERM");
    const timer = setTimeout(() => this.signal("SIGKILL"), graceMs);
    await this.exited;
    clearTimeout(timer);
    this.signal("SIGKILL"); // whatever of the group outlived its leader
  }

  /** SIGKILL to the whole group at once (a crash, as the fault tests need). */
  killNow(): void {
    this.signal("SIGKILL");
  }

  private signal(sig: NodeJS.Signals): void {
    try {
      if (this.child.pid !== undefined) process.kill(-this.child.pid, sig);
    } catch {
      // already gone
    }
  }

  private record(line: string, stream: "stdout" | "stderr"): void {
    this.lines.push(line);
    if (this.lines.length > 500) this.lines.splice(0, this.lines.length - 500);
    this.options.onLine?.(line, stream);
    for (const w of [...this.waiters]) w(line);
  }
}
