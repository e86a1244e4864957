import { parseArgs, type ParseArgsConfig } from "node:util";
import { CliError } from "./cli-error.ts";

/** One subcommand of the CLI. */
export interface Command {
  run(argv: string[]): Promise<number | void>;
}

/**
 * Parses a command's flags strictly; unknown flags are a user error that names the flag, and so
 * are arguments past the `positionals` the command takes (a misspelt subcommand would otherwise
 * run the command itself).
 */
export function parseFlags<T extends NonNullable<ParseArgsConfig["options"]>>(argv: string[], options: T, usage: string, o: { positionals?: number } = {}) {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: { ...options, help: { type: "boolean", short: "h" } }, strict: true, allowPositionals: true });
  } catch (error) {
    throw new CliError(`${(error as Error).message}\n${usage}`);
  }
  const extra = parsed.positionals.slice(o.positionals ?? 0);
  if (extra.length > 0 && !(parsed.values as { help?: boolean }).help) throw new CliError(`unexpected argument '${extra[0]!.slice(0, 64)}'\n${usage}`);
  return parsed;
}

/** Prints the result: a human view (unless --json), then always the JSON object as the last stdout line. */
export function printResult(result: unknown, json: boolean, human?: () => string): void {
  if (!json && human) console.log(human());
  console.log(JSON.stringify(result));
}

/** Parses a positive integer flag value, naming the flag when it is not one. */
export function positiveInt(value: string, flag: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n <= 0) throw new CliError(`${flag} must be a positive integer, got '${value}'`);
  return n;
}
