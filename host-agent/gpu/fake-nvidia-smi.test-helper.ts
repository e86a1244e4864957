import { chmodSync, copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const SCRIPT = fileURLToPath(new URL("../test-fixtures/fake-nvidia-smi", import.meta.url));

/** An installed copy of test-fixtures/fake-nvidia-smi with its own call log and state. */
export interface FakeNvidiaSmi {
  /** Directory holding the executable `nvidia-smi`, for PATH. */
  dir: string;
  path: string;
  /** Environment for the backend's child processes: the log and state files, plus `extra`. */
  env(extra?: Record<string, string>): NodeJS.ProcessEnv;
  /** Argument lists of the calls so far, space-joined, one per call. */
  calls(): string[];
  /** Forgets calls and state (locks, limits, MIG instances). */
  reset(): void;
}

/** Copies the fake nvidia-smi into a fresh temp dir as an executable named `nvidia-smi`. */
export function installFakeNvidiaSmi(): FakeNvidiaSmi {
  const dir = mkdtempSync(join(tmpdir(), "fake-nvidia-smi-"));
  const path = join(dir, "nvidia-smi");
  copyFileSync(SCRIPT, path);
  chmodSync(path, 0o755);
  const log = join(dir, "calls.log");
  const state = join(dir, "state.json");
  return {
    dir,
    path,
    env: (extra = {}) => ({ ...process.env, FAKE_SMI_LOG: log, FAKE_SMI_STATE: state, ...extra }),
    calls: () => (existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean) : []),
    reset: () => {
      rmSync(log, { force: true });
      rmSync(state, { force: true });
    },
  };
}
