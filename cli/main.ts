import { commands } from "./commands/index.ts";
import { CliError } from "./cli-error.ts";

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
  try {
    return (await (await command.load()).run(rest)) ?? 0;
  } catch (error) {
    if (error instanceof CliError || (error instanceof Error && error.name === "DataError")) {
      console.error(`greenference ${name}: ${error.message}`);
      return 1;
    }
    throw error;
  }
}
