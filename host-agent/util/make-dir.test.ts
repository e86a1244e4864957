import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { makeDir, makeDirSync, MakeDirError } from "./make-dir.ts";

const root = mkdtempSync(join(tmpdir(), "make-dir-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const MAKE_DIR = fileURLToPath(new URL("./make-dir.ts", import.meta.url));

/** Runs `makeDirSync(path)` in a child process, where a hang is killed rather than this test's worker: how it ended, and how long the call took. */
function inChild(path: string) {
  const script = `import { makeDirSync } from ${JSON.stringify(MAKE_DIR)};
const t = performance.now();
try { makeDirSync(${JSON.stringify(path)}); } catch (e) { console.log(JSON.stringify({ ms: performance.now() - t, name: e.name, message: e.message })); process.exit(1); }`;
  const r = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { encoding: "utf8", timeout: 10_000 });
  return { status: r.status, signal: r.signal, thrown: r.stdout ? (JSON.parse(r.stdout) as { ms: number; name: string; message: string }) : undefined };
}

describe("makeDirSync", () => {
  it("creates a nested path and its missing parents with the mode given, and takes one that exists", async () => {
    const dir = join(root, "a", "b", "c");
    makeDirSync(dir, 0o700);
    expect(statSync(dir).isDirectory()).toBe(true);
    expect(statSync(join(root, "a")).mode & 0o777).toBe(0o700);
    makeDirSync(dir);
    await makeDir(join(root, "a", "d"));
    expect(statSync(join(root, "a", "d")).isDirectory()).toBe(true);
  });

  it("says which ancestor, or the path itself, is in the way", () => {
    writeFileSync(join(root, "file"), "");
    const target = join(root, "file", "x", "y");
    expect(() => makeDirSync(target)).toThrow(new MakeDirError(`cannot create ${target}: ${join(root, "file")} is not a directory`, "ENOTDIR", target));
    expect(() => makeDirSync(join(root, "file"))).toThrow(`cannot create ${join(root, "file")}: it exists and is not a directory`);
  });

  it("fails at once under /proc, which takes no new directories (recursive mkdir loops forever there)", () => {
    const r = inChild("/proc/x/y");
    expect(r.signal).toBeNull();
    expect(r.status).toBe(1);
    expect(r.thrown).toEqual({ ms: expect.any(Number), name: "MakeDirError", message: "cannot create /proc/x/y: /proc takes no new directories" });
    expect(r.thrown!.ms).toBeLessThan(1000);
  });
});
