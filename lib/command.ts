import { parseArgs, type ParseArgsConfig } from "node:util";
import { CliError } from "./cli-error.ts";

/** One subcommand of the CLI. */
export interface Command {
  run(argv: string[]): Promise<number | void>;
}

/** Parses a command's flags strictly; unknown flags are a user error that names the flag. */
export function parseFlags<T extends NonNullable<ParseArgsConfig["options"]>>(argv: string[], options: T, usage: string) {
  try {
    return parseArgs({ args: argv, options: { ...options, help: { type: "boolean", short: "h" } }, strict: true, allowPositionals: true });
  } catch (error) {
    throw new CliError(`${(error as Error).message}\n${usage}`);
  }
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
