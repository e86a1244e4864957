import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeFileSync } from "node:fs";

/**
 * Writes `text` to `path` so that a reader, or the agent after a crash, sees the old file or the
 * new one, never part of one: the text goes to a temp file beside it, is flushed to disk, and is
 * renamed over `path`. When any step fails (a full disk) the temp file is removed again, so a
 * failed write leaves nothing behind.
 *
 * @example
 * writeFileAtomic("/var/lib/greenference-agent/gpu-defaults.json", JSON.stringify(defaults));
 */
export function writeFileAtomic(path: string, text: string): void {
  const temp = `${path}.${process.pid}.tmp`;
  try {
    writeFlushed(temp, text);
    renameSync(temp, path);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
}

/** Writes `text` to a fresh file at `path` (owner only) and flushes it to disk. */
function writeFlushed(path: string, text: string): void {
  const fd = openSync(path, "w", 0o600);
  try {
    writeFileSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
