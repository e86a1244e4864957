import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from "node:fs";

/**
 * Writes `text` to `path` so that a reader, or the agent after a crash, sees the old file or the
 * new one, never part of one: the text goes to a temp file beside it, is flushed to disk, and is
 * renamed over `path`.
 *
 * @example
 * writeFileAtomic("/var/lib/greenference-agent/gpu-defaults.json", JSON.stringify(defaults));
 */
export function writeFileAtomic(path: string, text: string): void {
  const temp = `${path}.${process.pid}.tmp`;
  const fd = openSync(temp, "w", 0o600);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    renameSync(temp, path);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
}
