import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { writeFileAtomic } from "./atomic-file.ts";

const MODULE = fileURLToPath(new URL("atomic-file.ts", import.meta.url));
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const dirs: string[] = [];

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "atomic-file-"));
  dirs.push(dir);
  return dir;
}

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/**
 * Runs `writeFileAtomic(path, text)` in a node process that may not write a byte to any file
 * (`ulimit -f 0`, RLIMIT_FSIZE): it creates the temp file, and writing its content fails as on a
 * full disk (EFBIG here, ENOSPC there). Returns the error code the call threw, or "written".
 */
function writeWithoutRoomForBytes(path: string, text: string): string {
  const script = `import { register } from "tsx/esm/api"; register(); const { writeFileAtomic } = await import(process.argv[1]);
try { writeFileAtomic(process.argv[2], process.argv[3]); console.log("written"); } catch (error) { console.log(error.code); }`;
  const run = spawnSync("bash", ["-c", 'ulimit -f 0 && exec "$@"', "bash", process.execPath, "--input-type=module", "-e", script, MODULE, path, text], { cwd: ROOT, encoding: "utf8" });
  expect(run.status, run.stderr).toBe(0);
  return run.stdout.trim();
}

describe("writeFileAtomic", () => {
  it("replaces the file whole and leaves no temp file", () => {
    const dir = tempDir();
    const path = join(dir, "state.json");
    writeFileAtomic(path, "one");
    writeFileAtomic(path, "two");
    expect(readFileSync(path, "utf8")).toBe("two");
    expect(readdirSync(dir)).toEqual(["state.json"]);
  });

  it("removes its temp file when writing the content fails, and leaves the old file as it was", () => {
    const dir = tempDir();
    const path = join(dir, "agent.lock");
    expect(writeWithoutRoomForBytes(path, "new")).toBe("EFBIG");
    expect(readdirSync(dir)).toEqual([]);

    writeFileAtomic(path, "old");
    expect(writeWithoutRoomForBytes(path, "new")).toBe("EFBIG");
    expect(readdirSync(dir)).toEqual(["agent.lock"]);
    expect(readFileSync(path, "utf8")).toBe("old");
  });
});
