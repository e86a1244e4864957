import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import koffi from "koffi";

const SOURCE = fileURLToPath(new URL("../test-fixtures/fake-nvml.c", import.meta.url));

/** A compiled copy of test-fixtures/fake-nvml.c and the means to steer and watch it. */
export interface FakeNvml {
  libraryPath: string;
  /** Sets FAKE_NVML_* variables inside the library's process environment (read by nvmlInit_v2). */
  setEnv(vars: Record<string, string | null>): void;
  /** Calls logged since the last `clearLog()`, one "<function> <args>" string each. */
  calls(): string[];
  clearLog(): void;
  /** Adds energy to a device's counter (counted alone with FAKE_NVML_ENERGY=charged). */
  charge(index: number, joules: number): void;
}

/**
 * Compiles the fake NVML library into a fresh temp dir with `$CC` (default `cc`). Fails with a
 * clear message when no C compiler is installed: these tests must not be skipped silently.
 */
export function buildFakeNvml(): FakeNvml {
  const dir = mkdtempSync(join(tmpdir(), "fake-nvml-"));
  const libraryPath = join(dir, "libnvidia-ml.so.1");
  const compiler = process.env.CC ?? "cc";
  try {
    execFileSync(compiler, ["-shared", "-fPIC", "-Wall", "-o", libraryPath, SOURCE], { stdio: "pipe" });
  } catch (error) {
    const e = error as NodeJS.ErrnoException & { stderr?: Buffer };
    if (e.code === "ENOENT") {
      throw new Error(`C compiler '${compiler}' not found: the NVML FFI tests compile ${SOURCE} and need cc/gcc on PATH (or $CC)`);
    }
    throw new Error(`compiling ${SOURCE} with ${compiler} failed: ${e.stderr?.toString() ?? e.message}`);
  }
  const log = join(dir, "calls.log");
  writeFileSync(log, "");
  const library = koffi.load(libraryPath);
  const setenv = library.func("int fake_nvml_setenv(const char *name, const char *value)");
  const charge = library.func("int fake_nvml_charge(unsigned int index, double joules)");
  const fake: FakeNvml = {
    libraryPath,
    setEnv(vars) {
      for (const [name, value] of Object.entries(vars)) setenv(name, value);
    },
    calls: () => (existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean) : []),
    clearLog: () => writeFileSync(log, ""),
    charge: (index, joules) => {
      if (charge(index, joules) !== 0) throw new Error(`fake_nvml_charge(${index}, ${joules}) failed`);
    },
  };
  fake.setEnv({ FAKE_NVML_LOG: log });
  return fake;
}
