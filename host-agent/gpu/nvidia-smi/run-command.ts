import { execFile } from "node:child_process";

/** What a finished command left behind. `code` is its exit status (null if a signal ended it). */
export interface CommandResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  timeoutMs: number;
  env?: NodeJS.ProcessEnv;
}

/**
 * Runs an executable without a shell and resolves with its exit status and output, whatever the
 * status. Rejects only when it could not be started (the Node error, e.g. code ENOENT).
 *
 * @example
 * const { code, stdout } = await runCommand("nvidia-smi", ["-L"], { timeoutMs: 10_000 });
 */
export function runCommand(file: string, args: readonly string[], options: RunOptions): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { timeout: options.timeoutMs, env: options.env, encoding: "utf8", maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error && typeof error.code === "string") {
        reject(error);
        return;
      }
      const code = error ? (typeof error.code === "number" ? error.code : null) : 0;
      resolve({ code, signal: error?.signal ?? null, stdout, stderr });
    });
  });
}
