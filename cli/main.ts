import { isAbsolute, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { commands } from "./commands/index.ts";
import { CliError } from "../lib/cli-error.ts";
import type { Command } from "../lib/command.ts";

const PACKAGE_ROOT = fileURLToPath(new URL("..", import.meta.url));

const usage = () =>
  [
    "usage: greenference <command> [options]",
    "",
    "commands:",
    ...Object.entries(commands).map(([name, c]) => `  ${name.padEnd(12)} ${c.summary}`),
    "",
    "Run `greenference <command> --help` for a command's options.",
  ].join("\n");

/** Runs one CLI command and returns the process exit code. */
export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === "--help" || name === "-h") {
    console.log(usage());
    return name ? 0 : 2;
  }
  const command = commands[name];
  if (!command) {
    console.error(`greenference: unknown command '${name}'\n\n${usage()}`);
    return 2;
  }
  let loaded: Command;
  try {
    loaded = await command.load();
  } catch (error) {
    const missing = missingModule(error);
    if (missing === undefined) throw error;
    // The npm package ships the agent and the offline commands; `start` and `bench` need the
    // repository's dev dependencies (wrangler, the test fixtures) and are left out of it.
    console.error(`greenference ${name}: this installation lacks ${missing}, which the command needs; run it from a clone of the repository after \`npm ci\``);
    return 1;
  }
  try {
    return (await loaded.run(rest)) ?? 0;
  } catch (error) {
    if (error instanceof CliError || (error instanceof Error && error.name === "DataError") || isSystemError(error)) {
      console.error(`greenference ${name}: ${error.message}`);
      return 1;
    }
    throw error;
  }
}

/**
 * An error the operating system gave for a path the user named (an output that is a file, a
 * directory that cannot be written): its message names the call and the path, which is all the
 * user needs; a stack trace would only bury it.
 */
function isSystemError(error: unknown): error is NodeJS.ErrnoException {
  const e = error as NodeJS.ErrnoException;
  return error instanceof Error && typeof e.code === "string" && typeof e.syscall === "string";
}

/** The module a failed import could not find (relative to the package when inside it), or undefined for any other error. */
function missingModule(error: unknown): string | undefined {
  if (!(error instanceof Error) || (error as NodeJS.ErrnoException).code !== "ERR_MODULE_NOT_FOUND") return undefined;
  const quoted = /Cannot find (?:module|package) '([^']+)'/.exec(error.message)?.[1];
  if (quoted === undefined) return "a module";
  if (!isAbsolute(quoted)) return quoted;
  const inside = relative(PACKAGE_ROOT, quoted);
  return inside.startsWith("..") ? quoted : inside;
}
