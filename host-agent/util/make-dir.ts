import { mkdirSync, statSync, type Stats } from "node:fs";
import { dirname, resolve } from "node:path";

/** A directory that cannot be created; `code` and `syscall` as a system error has them, so the CLI prints it in one line. */
export class MakeDirError extends Error {
  override readonly name = "MakeDirError";
  readonly syscall = "mkdir";
  constructor(
    message: string,
    readonly code: string,
    readonly path: string,
  ) {
    super(message);
  }
}

/**
 * Creates `path` and its missing parents (as `mkdir -p`), one component at a time from the nearest
 * existing ancestor. Unlike `mkdirSync(path, { recursive: true })`, which loops forever where a
 * parent exists but takes no new entries (/proc: ENOENT), it fails at once, saying which
 * ancestor refused.
 *
 * @example
 * makeDirSync("out/run-1/plots"); // creates out, out/run-1, out/run-1/plots as needed
 * makeDirSync("/proc/x"); // throws MakeDirError "cannot create /proc/x: /proc takes no new directories"
 */
export function makeDirSync(path: string, mode?: number): void {
  const missing: string[] = [];
  let dir = resolve(path);
  let st = statOf(dir);
  // Bounded: up to the root at most.
  while (!st && dirname(dir) !== dir) {
    missing.unshift(dir);
    dir = dirname(dir);
    st = statOf(dir);
  }
  if (st && !st.isDirectory()) {
    if (missing.length === 0) throw new MakeDirError(`cannot create ${path}: it exists and is not a directory`, "EEXIST", path);
    throw new MakeDirError(`cannot create ${path}: ${dir} is not a directory`, "ENOTDIR", path);
  }
  for (const d of missing) {
    try {
      mkdirSync(d, mode === undefined ? {} : { mode });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? "EIO";
      if (code === "EEXIST" && statOf(d)?.isDirectory()) continue;
      throw new MakeDirError(`cannot create ${path}: ${why(code, d)}`, code, path);
    }
  }
}

/** `makeDirSync`, for async code. */
export async function makeDir(path: string, mode?: number): Promise<void> {
  makeDirSync(path, mode);
}

function statOf(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

function why(code: string, dir: string): string {
  const parent = dirname(dir);
  switch (code) {
    case "ENOENT":
      return `${parent} takes no new directories`;
    case "EACCES":
    case "EPERM":
      return `no permission to create directories in ${parent}`;
    case "EROFS":
      return `${parent} is on a read-only file system`;
    case "ENOTDIR":
    case "EEXIST":
      return `${dir} exists and is not a directory`;
    default:
      return `mkdir ${dir} failed (${code})`;
  }
}
