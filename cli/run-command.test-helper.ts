import { vi } from "vitest";
import { main } from "./main.ts";

/** Runs the CLI in-process, capturing stdout/stderr lines; `last()` parses the closing JSON line. */
export async function runCli(args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const log = vi.spyOn(console, "log").mockImplementation((s: string) => void out.push(s));
  const error = vi.spyOn(console, "error").mockImplementation((s: string) => void err.push(s));
  try {
    const code = await main(args);
    return { code, out, err, last: () => JSON.parse(out.at(-1)!) };
  } finally {
    log.mockRestore();
    error.mockRestore();
  }
}
